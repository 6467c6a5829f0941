-- Lock a table's row for a commit and read its head: the current metadata
-- location, snapshot and last sequence number, and the database clock that
-- stamps the new snapshot. Every commit (a table load's, the writer's)
-- takes this lock before it reads the head it builds on, so the commits of
-- a table form one chain. Held until the commit's transaction ends.
-- $1 table id.
SELECT metadata_location, current_snapshot_id, last_sequence_number, now()
FROM tables
WHERE id = $1
FOR UPDATE;
