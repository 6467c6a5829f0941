-- The number of dead letters of some tables: the rows of the current
-- snapshot of each one's dead-letter table, whoever committed them: its
-- committed data files and the tail files table loads committed that no
-- later commit removed (as table_files.sql counts files). One row per
-- table that has any.
-- $1 table ids (of the tables, not of their dead-letter tables).
SELECT d.dlq_of, coalesce(sum(f.record_count), 0)::bigint
FROM tables d
CROSS JOIN LATERAL (
    SELECT record_count FROM data_files
    WHERE table_id = d.id AND committed_snapshot_id IS NOT NULL AND removed_snapshot_id IS NULL
    UNION ALL
    SELECT record_count FROM tail_files
    WHERE table_id = d.id AND removed_snapshot_id IS NULL) f
WHERE d.dlq_of = ANY($1)
GROUP BY d.dlq_of;
