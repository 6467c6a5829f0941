-- The ranges `mink table repair` examines (docs/design.md §4.7): the live
-- committed data files of a dead-letter table encoded with a schema
-- version older than its table's newest, by partition and offset, after a
-- position, at most $6 (or only the ranges $7/$8, to check them again
-- under the row locks). With each: the live data file of the table for
-- the same range (path NULL when it has none) and whether it is
-- committed; whether a live data file of the table overlaps the range
-- with other offsets; whether a live tail file of either table overlaps
-- it (a load committed rows there that the writer has not replaced yet);
-- and how many ranges matched before the limit.
-- $1 dead-letter table id, $2 table id, $3 the table's newest schema
-- version, $4 partition and $5 start offset to start after (-1 and -1:
-- from the first), $6 limit, $7 partitions and $8 start offsets of the
-- only ranges to return (NULL: all).
SELECT d.partition, d.start_offset, d.end_offset, d.path, d.record_count,
       f.path, coalesce(f.committed_snapshot_id IS NOT NULL, false),
       EXISTS (SELECT 1 FROM data_files o
               WHERE o.table_id = $2 AND o.partition = d.partition AND o.removed_snapshot_id IS NULL
                 AND o.start_offset < d.end_offset AND o.end_offset > d.start_offset
                 AND (o.start_offset <> d.start_offset OR o.end_offset <> d.end_offset)),
       EXISTS (SELECT 1 FROM tail_files tf
               WHERE tf.table_id IN ($1, $2) AND tf.partition = d.partition AND tf.removed_snapshot_id IS NULL
                 AND tf.start_offset < d.end_offset AND tf.end_offset > d.start_offset),
       count(*) OVER ()
FROM data_files d
LEFT JOIN data_files f ON f.table_id = $2 AND f.partition = d.partition AND f.start_offset = d.start_offset
                      AND f.end_offset = d.end_offset AND f.removed_snapshot_id IS NULL
WHERE d.table_id = $1 AND d.committed_snapshot_id IS NOT NULL AND d.removed_snapshot_id IS NULL
  AND d.schema_id < $3 AND (d.partition, d.start_offset) > ($4::int, $5::bigint)
  AND ($7::int[] IS NULL OR (d.partition, d.start_offset) IN (SELECT * FROM unnest($7::int[], $8::bigint[])))
ORDER BY d.partition, d.start_offset
LIMIT $6;
