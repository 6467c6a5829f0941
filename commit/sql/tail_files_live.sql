-- The live tail files of a table (in its current snapshot), by partition
-- and offset.
-- $1 table id.
SELECT path, partition, start_offset, end_offset, file_size, record_count, stats, committed_snapshot_id
FROM tail_files
WHERE table_id = $1 AND removed_snapshot_id IS NULL
ORDER BY partition, start_offset;
