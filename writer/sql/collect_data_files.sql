-- A removed data file is listed only by snapshots older than the one that
-- removed it; those expire first (sequence numbers grow along the branch).
-- Delete the rows of removed files no remaining snapshot lists.
-- $1 table id.
DELETE FROM data_files d
WHERE d.table_id = $1 AND d.removed_snapshot_id IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM snapshots s WHERE s.table_id = $1 AND s.sequence_number <
      coalesce((SELECT r.sequence_number FROM snapshots r WHERE r.table_id = $1 AND r.snapshot_id = d.removed_snapshot_id), 0))
  -- A file a tagged snapshot lists stays (docs/design.md §4.8).
  AND NOT EXISTS (SELECT 1 FROM tag_files g WHERE g.table_id = $1 AND g.path = d.path);
