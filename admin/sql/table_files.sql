-- The data files of a table's current snapshot: the indexed data files and
-- the tail files a commit added and no later commit removed; their number
-- and bytes. Of the table only (its dead letters are in its dead-letter
-- table's files).
-- $1 table id.
SELECT count(*), coalesce(sum(file_size), 0)::bigint
FROM (SELECT file_size FROM data_files
      WHERE table_id = $1 AND committed_snapshot_id IS NOT NULL AND removed_snapshot_id IS NULL
      UNION ALL
      SELECT file_size FROM tail_files
      WHERE table_id = $1 AND removed_snapshot_id IS NULL) f;
