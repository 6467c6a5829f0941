-- Mark indexed data files committed by a snapshot. Returns the keys it
-- marked.
-- $1 table id, $2 snapshot id, $3 keys.
UPDATE data_files SET committed_snapshot_id = $2,
    committed_sequence_number = (SELECT s.sequence_number FROM snapshots s WHERE s.table_id = $1 AND s.snapshot_id = $2)
WHERE table_id = $1 AND path = ANY($3) AND committed_snapshot_id IS NULL AND removed_snapshot_id IS NULL
RETURNING path;
