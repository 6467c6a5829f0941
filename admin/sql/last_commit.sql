-- A table's current snapshot: its id, sequence number, operation, commit
-- time (database clock) and the writer that committed it (NULL for a
-- table load's commit, which holds no lease). No row before the first
-- commit.
-- $1 table id.
SELECT s.snapshot_id, s.sequence_number, s.operation, s.committed_at, s.lease_holder
FROM tables t
JOIN snapshots s ON s.table_id = t.id AND s.snapshot_id = t.current_snapshot_id
WHERE t.id = $1;
