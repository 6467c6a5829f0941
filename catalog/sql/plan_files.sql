-- The data files (indexed and tail files) of one snapshot of a table's
-- main branch, read from their rows instead of the manifests (server-side
-- scan planning, docs/design.md §5). A file is in the snapshot when the
-- snapshot that added it is the snapshot or one of its ancestors (or an
-- older one: expired, or collected), and the snapshot that removed it, if
-- any, is neither. The caller checks the totals against the snapshot's
-- summary (plan_totals.sql) and plans from the manifests when they differ.
-- $1 table id, $2 the snapshot's sequence number, $3 the ids of the
-- snapshot and its ancestors, $4..$5 a span of offsets and $6..$7 of
-- partitions that holds every matching row (wider is always right),
-- $8, $9 the partition and start offset of a page's first file and
-- $10, $11 of its last (the caller cuts the page exactly by key), $12
-- whether to return the statistics (NULL when not). Ordered by partition,
-- start offset and key (bytewise), the order plan tasks page by.
WITH files AS (
    SELECT path, partition, start_offset, end_offset, file_size, record_count, stats,
           committed_snapshot_id, removed_snapshot_id
    FROM data_files
    WHERE table_id = $1 AND committed_snapshot_id IS NOT NULL
    UNION ALL
    SELECT path, partition, start_offset, end_offset, file_size, record_count, stats,
           committed_snapshot_id, removed_snapshot_id
    FROM tail_files
    WHERE table_id = $1
)
SELECT f.path, f.partition, f.start_offset, f.file_size, f.record_count, CASE WHEN $12 THEN f.stats END
FROM files f
LEFT JOIN snapshots c ON c.table_id = $1 AND c.snapshot_id = f.committed_snapshot_id
LEFT JOIN snapshots r ON r.table_id = $1 AND r.snapshot_id = f.removed_snapshot_id
WHERE (f.committed_snapshot_id = ANY($3) OR c.snapshot_id IS NULL OR (c.expired_at IS NOT NULL AND c.sequence_number <= $2))
  AND NOT (f.removed_snapshot_id IS NOT NULL
           AND (f.removed_snapshot_id = ANY($3) OR r.snapshot_id IS NULL
                OR (r.expired_at IS NOT NULL AND r.sequence_number <= $2)))
  AND f.end_offset > $4::bigint AND f.start_offset <= $5::bigint
  AND f.partition BETWEEN $6::bigint AND $7::bigint
  AND f.partition BETWEEN $8::int AND $10::int
  AND (f.partition > $8::int OR f.start_offset >= $9::bigint)
  AND (f.partition < $10::int OR f.start_offset <= $11::bigint)
ORDER BY f.partition, f.start_offset, f.path COLLATE "C";
