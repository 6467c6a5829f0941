-- The data files (indexed and tail files) of one snapshot of a table's
-- main branch, read from their rows instead of the manifests (server-side
-- scan planning, docs/design.md §5). Main is linear in sequence numbers,
-- so a file is in the snapshot of sequence number S when the snapshot
-- that committed it has one at or below S and the snapshot that removed
-- it, if any, one above S (migration 015; no parent walk: thinning leaves
-- gaps in the parent chain). The caller checks the totals against the
-- snapshot's summary (plan_totals.sql) and plans from the manifests when
-- they differ.
-- $1 table id, $2 the snapshot's sequence number, $3..$4 a span of
-- offsets and $5..$6 of partitions that holds every matching row (wider
-- is always right), $7, $8 the partition and start offset of a page's
-- first file and $9, $10 of its last (the caller cuts the page exactly
-- by key), $11 whether to return the statistics (NULL when not). Ordered
-- by partition, start offset and key (bytewise), the order plan tasks
-- page by.
WITH files AS (
    SELECT path, partition, start_offset, end_offset, file_size, record_count, stats,
           committed_sequence_number, removed_sequence_number
    FROM data_files
    WHERE table_id = $1 AND committed_snapshot_id IS NOT NULL
    UNION ALL
    SELECT path, partition, start_offset, end_offset, file_size, record_count, stats,
           committed_sequence_number, removed_sequence_number
    FROM tail_files
    WHERE table_id = $1
)
SELECT f.path, f.partition, f.start_offset, f.file_size, f.record_count, CASE WHEN $11 THEN f.stats END
FROM files f
WHERE f.committed_sequence_number <= $2
  AND (f.removed_sequence_number IS NULL OR f.removed_sequence_number > $2)
  AND f.end_offset > $3::bigint AND f.start_offset <= $4::bigint
  AND f.partition BETWEEN $5::bigint AND $6::bigint
  AND (f.partition, f.start_offset) >= ($7::int, $8::bigint)
  AND (f.partition, f.start_offset) <= ($9::int, $10::bigint)
ORDER BY f.partition, f.start_offset, f.path COLLATE "C";
