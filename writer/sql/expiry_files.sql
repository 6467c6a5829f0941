-- The live committed data files of a table that expiry rewrites
-- (docs/design.md §4.6): those that start below their partition's log start
-- offset, those marked for re-indexing, and those of another encoder
-- version; by partition and offset, at most $4.
-- $1 table id, $2 partitions, $3 their log start offsets, $4 limit, $5 this
-- node's encoder version.
SELECT d.path, d.partition, d.start_offset, d.end_offset, d.file_size, d.sha256, d.needs_rebuild, o.log_start,
       d.record_count, d.encoder_version
FROM data_files d JOIN unnest($2::int[], $3::bigint[]) AS o(partition, log_start) ON o.partition = d.partition
WHERE d.table_id = $1 AND d.committed_snapshot_id IS NOT NULL AND d.removed_snapshot_id IS NULL
  AND (d.start_offset < o.log_start OR d.needs_rebuild OR d.encoder_version <> $5)
ORDER BY d.partition, d.start_offset
LIMIT $4;
