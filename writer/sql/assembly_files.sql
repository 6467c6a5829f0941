-- The live data files of a table and of its dead-letter table that
-- assembly plans with (docs/design.md §4.6, "assembly"): committed or not,
-- by partition, offset and table (the table first).
-- $1 table id, $2 dead-letter table id.
SELECT table_id = $2, path, partition, start_offset, end_offset, file_size, record_count, schema_id,
       encoder_version, needs_rebuild, committed_snapshot_id IS NOT NULL
FROM data_files
WHERE table_id IN ($1, $2) AND removed_snapshot_id IS NULL
ORDER BY partition, start_offset, table_id = $2;
