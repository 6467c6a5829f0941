-- The ranges `mink table repair` examines (docs/design.md §4.7): the
-- ranges of the live committed data files of a dead-letter table encoded
-- with a schema version older than its table's newest, and of the live
-- committed data files of the table encoded with one of its default-gap
-- versions (tables.DefaultGaps), by partition and offset, after a
-- position, at most $6 (or only the ranges $7/$8, to check them again
-- under the row locks). With each: the live data file of the dead-letter
-- table for the range (path NULL and 0 records when it has none) and
-- whether it is committed; the live data file of the table (path NULL
-- when none) and whether it is committed; whether that file was encoded
-- with a default-gap version; whether a live data file of either table
-- overlaps the range with other offsets; whether a live tail file of
-- either table overlaps it (a load committed rows there that the writer
-- has not replaced yet); and how many ranges matched before the limit.
-- $1 dead-letter table id, $2 table id, $3 the table's newest schema
-- version, $4 partition and $5 start offset to start after (-1 and -1:
-- from the first), $6 limit, $7 partitions and $8 start offsets of the
-- only ranges to return (NULL: all), $9 the table's default-gap versions.
WITH r AS (
    SELECT partition, start_offset, end_offset FROM data_files
    WHERE table_id = $1 AND committed_snapshot_id IS NOT NULL AND removed_snapshot_id IS NULL
      AND schema_id < $3
    UNION
    SELECT partition, start_offset, end_offset FROM data_files
    WHERE table_id = $2 AND committed_snapshot_id IS NOT NULL AND removed_snapshot_id IS NULL
      AND schema_id = ANY($9::int[])
)
SELECT r.partition, r.start_offset, r.end_offset, d.path, coalesce(d.record_count, 0),
       coalesce(d.committed_snapshot_id IS NOT NULL, false),
       f.path, coalesce(f.committed_snapshot_id IS NOT NULL, false),
       coalesce(f.schema_id = ANY($9::int[]), false),
       EXISTS (SELECT 1 FROM data_files o
               WHERE o.table_id IN ($1, $2) AND o.partition = r.partition AND o.removed_snapshot_id IS NULL
                 AND o.start_offset < r.end_offset AND o.end_offset > r.start_offset
                 AND (o.start_offset <> r.start_offset OR o.end_offset <> r.end_offset)),
       EXISTS (SELECT 1 FROM tail_files tf
               WHERE tf.table_id IN ($1, $2) AND tf.partition = r.partition AND tf.removed_snapshot_id IS NULL
                 AND tf.start_offset < r.end_offset AND tf.end_offset > r.start_offset),
       count(*) OVER ()
FROM r
LEFT JOIN data_files d ON d.table_id = $1 AND d.partition = r.partition AND d.start_offset = r.start_offset
                      AND d.end_offset = r.end_offset AND d.removed_snapshot_id IS NULL
LEFT JOIN data_files f ON f.table_id = $2 AND f.partition = r.partition AND f.start_offset = r.start_offset
                      AND f.end_offset = r.end_offset AND f.removed_snapshot_id IS NULL
WHERE (r.partition, r.start_offset) > ($4::int, $5::bigint)
  AND ($7::int[] IS NULL OR (r.partition, r.start_offset) IN (SELECT * FROM unnest($7::int[], $8::bigint[])))
ORDER BY r.partition, r.start_offset
LIMIT $6;
