-- Mark an indexed data file committed by the snapshot that added the tail
-- file of the same key (tail_files_adopt.sql).
-- $1 table id, $2 key, $3 snapshot id, $4 its sequence number.
UPDATE data_files SET committed_snapshot_id = $3, committed_sequence_number = $4
WHERE table_id = $1 AND path = $2 AND committed_snapshot_id IS NULL AND removed_snapshot_id IS NULL;
