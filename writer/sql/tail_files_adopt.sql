-- A live tail file whose range is exactly an indexed range is that range's
-- data file (the same key, the same bytes): the data file takes the tail
-- file's place, committed by the snapshot that added it, and the tail row
-- goes. Returns the keys, the committing snapshots and their sequence
-- numbers (the snapshot's row may be collected already).
-- $1 table id, $2 keys.
DELETE FROM tail_files
WHERE table_id = $1 AND path = ANY($2) AND removed_snapshot_id IS NULL
RETURNING path, committed_snapshot_id, committed_sequence_number;
