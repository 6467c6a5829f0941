-- Delete the rows of removed data files that no remaining snapshot lists.
-- The snapshots of branch main that list a file have a sequence number in
-- [committed, removed) (expiry thins the history, so the snapshot that
-- removed the file may be gone while an older one that lists it stays);
-- a snapshot row remains until collection deletes it, CollectAfter after it
-- expired. A tagged snapshot is off main: the files it lists are in
-- tag_files.
-- $1 table id.
DELETE FROM data_files d
WHERE d.table_id = $1 AND d.removed_sequence_number IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM snapshots s
                  WHERE s.table_id = $1 AND s.ref_name IS NULL AND s.sequence_number >= coalesce(d.committed_sequence_number, 0)
                    AND s.sequence_number < d.removed_sequence_number)
  -- A file a tagged snapshot lists stays (docs/design.md §4.8).
  AND NOT EXISTS (SELECT 1 FROM tag_files g WHERE g.table_id = $1 AND g.path = d.path);
