-- The number of dead letters of some tables: the rows of the current
-- snapshot of each one's dead-letter table, whoever committed them: its
-- committed data files and the tail files table loads committed that no
-- later commit removed (as table_files.sql counts files). One row per
-- table that has any.
-- $1 table ids, $2 the ids of their dead-letter tables, pairwise (a
-- table's own id when it has none: it counts nothing).
SELECT g.id, sum(f.record_count)::bigint
FROM unnest($1::bigint[], $2::bigint[]) AS g(id, dlq)
JOIN (SELECT table_id, record_count FROM data_files
      WHERE committed_snapshot_id IS NOT NULL AND removed_snapshot_id IS NULL
      UNION ALL
      SELECT table_id, record_count FROM tail_files
      WHERE removed_snapshot_id IS NULL) f ON f.table_id = g.dlq
WHERE g.dlq <> g.id
GROUP BY g.id;
