-- The live nodes (unexpired by the database clock), by id: each node's
-- start, the number of unexpired partition leases it holds, and the
-- tables whose unexpired writer lease it holds, with that lease's epoch,
-- by table name (two arrays of one order).
SELECT n.id, n.advertise_url, n.roles, n.started_at, n.expires_at,
       count(l.scope) FILTER (WHERE l.kind = 'partition'),
       coalesce(array_agg(t.namespace || '.' || t.name ORDER BY t.namespace, t.name)
                FILTER (WHERE l.kind = 'writer'), '{}'),
       coalesce(array_agg(l.epoch ORDER BY t.namespace, t.name) FILTER (WHERE l.kind = 'writer'), '{}')
FROM nodes n
LEFT JOIN leases l ON l.holder = n.id AND l.expires_at > now()
LEFT JOIN tables t ON t.id = l.table_id
WHERE n.expires_at > now()
GROUP BY n.id
ORDER BY n.id;
