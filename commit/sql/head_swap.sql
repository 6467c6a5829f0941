-- Make a commit's metadata the table's current one: compare-and-swap on
-- the metadata location (the row lock already holds it still).
-- $1 table id, $2 new metadata location, $3 new snapshot id, $4 its
-- sequence number, $5 the location the commit built on.
UPDATE tables
SET metadata_location = $2, current_snapshot_id = $3, last_sequence_number = $4
WHERE id = $1 AND metadata_location = $5;
