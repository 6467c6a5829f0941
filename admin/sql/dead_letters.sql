-- The number of dead letters of some tables: the rows of each one's
-- dead-letter table's live data files, committed or about to be. One row
-- per table that has any.
-- $1 table ids (of the tables, not of their dead-letter tables).
SELECT d.dlq_of, coalesce(sum(f.record_count), 0)::bigint
FROM tables d
JOIN data_files f ON f.table_id = d.id AND f.removed_snapshot_id IS NULL
WHERE d.dlq_of = ANY($1)
GROUP BY d.dlq_of;
