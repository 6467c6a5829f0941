-- Mark live data files removed by an expiry snapshot (and no longer to
-- re-index).
-- $1 table id, $2 removing snapshot id, $3 keys.
UPDATE data_files SET removed_snapshot_id = $2, needs_rebuild = false,
    removed_sequence_number = (SELECT s.sequence_number FROM snapshots s WHERE s.table_id = $1 AND s.snapshot_id = $2)
WHERE table_id = $1 AND path = ANY($3) AND removed_snapshot_id IS NULL;
