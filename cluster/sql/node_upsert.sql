-- Register or renew this node's row (docs/design.md §3.1); re-inserts it if it
-- vanished. The expiry is computed by the database clock. Another process
-- (another instance token) cannot take over a row that has not expired:
-- then no row is returned. started_at is the registration of this process
-- (instance): a new process under the same id starts again.
-- $1 id, $2 advertise_url, $3 roles, $4 lease_ttl in microseconds, $5 instance,
-- $6 max_partitions (0 = no cap).
INSERT INTO nodes (id, instance, advertise_url, roles, expires_at, max_partitions)
VALUES ($1, $5, $2, $3, now() + $4::bigint * interval '1 microsecond', $6)
ON CONFLICT (id) DO UPDATE
    SET advertise_url = excluded.advertise_url,
        roles = excluded.roles,
        max_partitions = excluded.max_partitions,
        expires_at = excluded.expires_at,
        started_at = CASE WHEN nodes.instance = excluded.instance THEN nodes.started_at ELSE now() END,
        instance = excluded.instance
    WHERE nodes.instance = excluded.instance OR nodes.expires_at < now()
RETURNING (xmax = 0) AS inserted;
