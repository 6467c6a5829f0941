-- The live members: rows that have not expired by the database clock, and
-- whether each is still Starting: registered less than lease_ttl/3 ago
-- (docs/design.md §3.3, "A first round that waits"), and its
-- max_partitions (0 = no cap).
-- $1 lease_ttl/3 in microseconds.
SELECT id, advertise_url, roles, expires_at,
       started_at > now() - $1::bigint * interval '1 microsecond' AS starting,
       max_partitions
FROM nodes
WHERE expires_at > now()
ORDER BY id;
