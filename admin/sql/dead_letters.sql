-- The number of dead letters of a table: the rows of its dead-letter
-- table's live data files, committed or about to be.
-- $1 table id (of the table, not of its dead-letter table).
SELECT coalesce(sum(record_count), 0)::bigint
FROM data_files
WHERE table_id = (SELECT id FROM tables WHERE dlq_of = $1) AND removed_snapshot_id IS NULL;
