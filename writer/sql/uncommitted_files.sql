-- A table's indexed data files not in any snapshot yet, by partition and
-- offset (at most $2; the writer commits the rest next round).
-- $1 table id, $2 limit.
SELECT path, partition, start_offset, end_offset, file_size, stats
FROM data_files
WHERE table_id = $1 AND committed_snapshot_id IS NULL AND removed_snapshot_id IS NULL
ORDER BY partition, start_offset
LIMIT $2;
