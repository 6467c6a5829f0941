-- A table's head, without a lock (planning a commit; the committer checks
-- the head again under the lock). Read in the same database snapshot as
-- the content ends.
-- schema_id is the table's newest schema version (docs/design.md §4.7).
-- $1 table id.
SELECT metadata_location, current_snapshot_id, last_sequence_number, now(), schema_id
FROM tables
WHERE id = $1;
