-- The current snapshot of some tables: each one's id, snapshot id,
-- sequence number, operation, commit time (database clock) and the writer
-- that committed it (NULL for a table load's commit, which holds no
-- lease). No row for a table before its first commit.
-- $1 table ids.
SELECT t.id, s.snapshot_id, s.sequence_number, s.operation, s.committed_at, s.lease_holder
FROM tables t
JOIN snapshots s ON s.table_id = t.id AND s.snapshot_id = t.current_snapshot_id
WHERE t.id = ANY($1);
