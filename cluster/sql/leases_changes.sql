-- What changed in the lease table since a node's previous read
-- (cluster/view.go, migration 012; docs/design.md §3.3). One statement, so
-- every part reads at one snapshot: the one pg_current_snapshot() returns.
-- A change is a row whose changed transaction the previous snapshot did not
-- see (not "a larger number than the last seen": a transaction that began
-- before the previous read and committed after it has a smaller one).
-- $1 the previous read's snapshot (pg_snapshot as text); '1:1:', a snapshot
--    that saw nothing, reads everything.
-- Rows (what, scope, table_id, kind, partition, holder, epoch):
--   'snapshot': this read's snapshot, in scope;
--   'stale':    tombstones were pruned (or the table truncated) that $1 had
--               not seen: read again in full;
--   'deleted':  a lease row deleted since $1 (a tombstone), by scope;
--   'lease':    a lease row inserted, taken or released since $1;
--   'expired':  a held lease whose expires_at has passed by the database
--               clock (an expiry changes no row, so these come every read;
--               found by a scan that returns only them, migration 012 says
--               why there is no index).
SELECT 'snapshot', pg_current_snapshot()::text, 0::bigint, '', 0, '', 0::bigint
UNION ALL
SELECT 'stale', '', 0, '', 0, '', 0
FROM lease_deletions_pruned
WHERE through >= pg_snapshot_xmin($1::text::pg_snapshot)
UNION ALL
SELECT 'deleted', scope, table_id, '', 0, '', 0
FROM lease_deletions
WHERE deleted >= pg_snapshot_xmin($1::text::pg_snapshot)
  AND NOT pg_visible_in_snapshot(deleted, $1::text::pg_snapshot)
UNION ALL
SELECT 'lease', scope, table_id, kind, coalesce(partition, 0), coalesce(holder, ''), epoch
FROM leases
WHERE changed >= pg_snapshot_xmin($1::text::pg_snapshot)
  AND NOT pg_visible_in_snapshot(changed, $1::text::pg_snapshot)
UNION ALL
SELECT 'expired', scope, table_id, '', 0, '', 0
FROM leases
WHERE holder IS NOT NULL
  AND coalesce(expires_at, '-infinity'::timestamptz) < now();
