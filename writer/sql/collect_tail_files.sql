-- The same for removed tail files (replaced by indexed data files).
-- $1 table id.
DELETE FROM tail_files f
WHERE f.table_id = $1 AND f.removed_sequence_number IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM snapshots s
                  WHERE s.table_id = $1 AND s.ref_name IS NULL AND s.sequence_number >= coalesce(f.committed_sequence_number, 0)
                    AND s.sequence_number < f.removed_sequence_number)
  -- A file a tagged snapshot lists stays (docs/design.md §4.8).
  AND NOT EXISTS (SELECT 1 FROM tag_files g WHERE g.table_id = $1 AND g.path = f.path);
