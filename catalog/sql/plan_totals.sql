-- The number of data files and of records of one snapshot of a table's
-- main branch, counted from the rows as plan_files.sql reads them (by
-- sequence number); they must equal the snapshot summary's
-- total-data-files and total-records for the rows to be trusted.
-- It also cuts the files, ordered by partition and start offset, into
-- pages of at most $3 files: the partition and start offset of each
-- page's last file (the last page's excepted), the plan tasks of an
-- unfiltered plan, which then needs no list of its files.
-- $1 table id, $2 the snapshot's sequence number, $3 the files per page.
WITH files AS (
    SELECT partition, start_offset, record_count, committed_sequence_number, removed_sequence_number
    FROM data_files
    WHERE table_id = $1 AND committed_snapshot_id IS NOT NULL
    UNION ALL
    SELECT partition, start_offset, record_count, committed_sequence_number, removed_sequence_number
    FROM tail_files
    WHERE table_id = $1
), live AS (
    SELECT f.partition, f.start_offset, f.record_count,
           row_number() OVER (ORDER BY f.partition, f.start_offset) AS n
    FROM files f
    WHERE f.committed_sequence_number <= $2
      AND (f.removed_sequence_number IS NULL OR f.removed_sequence_number > $2)
)
SELECT count(*), coalesce(sum(record_count), 0)::bigint,
       coalesce(array_agg(partition ORDER BY n) FILTER (WHERE n % $3 = 0 AND n < (SELECT count(*) FROM live)), '{}'),
       coalesce(array_agg(start_offset ORDER BY n) FILTER (WHERE n % $3 = 0 AND n < (SELECT count(*) FROM live)), '{}')
FROM live;
