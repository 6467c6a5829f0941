-- A table's head, without a lock (planning a commit; the committer checks
-- the head again under the lock). Read in the same database snapshot as
-- the content ends.
-- $1 table id.
SELECT metadata_location, current_snapshot_id, last_sequence_number, now()
FROM tables
WHERE id = $1;
