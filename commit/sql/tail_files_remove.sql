-- Mark live tail files removed by a snapshot (replaced by indexed data
-- files). Returns the keys it marked: fewer than asked means another
-- commit removed some first.
-- $1 table id, $2 removing snapshot id, $3 keys.
UPDATE tail_files SET removed_snapshot_id = $2,
    removed_sequence_number = (SELECT s.sequence_number FROM snapshots s WHERE s.table_id = $1 AND s.snapshot_id = $2)
WHERE table_id = $1 AND path = ANY($3) AND removed_snapshot_id IS NULL
RETURNING path;
