-- The same for removed tail files (replaced by indexed data files).
-- $1 table id.
DELETE FROM tail_files f
WHERE f.table_id = $1 AND f.removed_snapshot_id IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM snapshots s WHERE s.table_id = $1 AND s.sequence_number <
      coalesce((SELECT r.sequence_number FROM snapshots r WHERE r.table_id = $1 AND r.snapshot_id = f.removed_snapshot_id), 0))
  -- A file a tagged snapshot lists stays (docs/design.md §4.8).
  AND NOT EXISTS (SELECT 1 FROM tag_files g WHERE g.table_id = $1 AND g.path = f.path);
