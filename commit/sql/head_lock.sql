-- Lock a table's row for a commit and read its head: the current metadata
-- location, snapshot and last sequence number, and the database clock that
-- stamps the new snapshot. Every commit (a table load's, the writer's)
-- takes this lock before it reads the head it builds on, so the commits of
-- a table form one chain. Held until the commit's transaction ends.
-- FOR NO KEY UPDATE, not FOR UPDATE: a commit changes no key column, and
-- the foreign-key checks of indexers' inserts (ranges, data_files: FOR KEY
-- SHARE on this row) must not wait for it — they hold their partition
-- lease FOR SHARE meanwhile, which a renewal of several leases waits for
-- while the writer, holding this row, waits for its own lease: a deadlock.
-- schema_id is the table's newest schema version (docs/design.md §4.7).
-- $1 table id.
SELECT metadata_location, current_snapshot_id, last_sequence_number, now(), schema_id
FROM tables
WHERE id = $1
FOR NO KEY UPDATE;
