-- The data files of the current snapshots of some tables: the indexed
-- data files and the tail files a commit added and no later commit
-- removed; per table, their number and bytes. Of the tables only (their
-- dead letters are in their dead-letter tables' files). One row per table
-- that has any.
-- $1 table ids.
SELECT table_id, count(*), coalesce(sum(file_size), 0)::bigint
FROM (SELECT table_id, file_size FROM data_files
      WHERE table_id = ANY($1) AND committed_snapshot_id IS NOT NULL AND removed_snapshot_id IS NULL
      UNION ALL
      SELECT table_id, file_size FROM tail_files
      WHERE table_id = ANY($1) AND removed_snapshot_id IS NULL) f
GROUP BY table_id;
