-- Every lease, by table name, the writer lease first, then partitions in
-- order; the holder is NULL when the lease is free or expired (by the
-- database clock).
SELECT l.scope, t.namespace || '.' || t.name, l.kind, l.partition,
       CASE WHEN l.expires_at > now() THEN l.holder END, l.epoch, l.expires_at
FROM leases l
JOIN tables t ON t.id = l.table_id
ORDER BY t.namespace, t.name, l.kind DESC, l.partition;
