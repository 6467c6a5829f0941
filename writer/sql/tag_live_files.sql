-- The files of a table's current snapshot (committed data files and tail
-- files no snapshot removed), with what a tagged snapshot lists of each
-- (docs/design.md §4.8), and where each partition starts; by partition
-- and offset.
-- $1 table id.
SELECT path, partition, start_offset, end_offset, file_size, sha256, record_count, stats
FROM data_files
WHERE table_id = $1 AND committed_snapshot_id IS NOT NULL AND removed_snapshot_id IS NULL
UNION ALL
SELECT path, partition, start_offset, end_offset, file_size, sha256, record_count, stats
FROM tail_files
WHERE table_id = $1 AND removed_snapshot_id IS NULL
ORDER BY 2, 3;
