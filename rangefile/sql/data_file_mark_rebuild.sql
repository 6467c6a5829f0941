-- Flag a live committed data file whose rebuild differs from its recorded
-- checksum for re-indexing by the table's writer (docs/design.md §4.5).
-- Files no longer live and tail files are left alone.
-- $1 key.
UPDATE data_files SET needs_rebuild = true
WHERE path = $1 AND removed_snapshot_id IS NULL AND committed_snapshot_id IS NOT NULL AND NOT needs_rebuild;
