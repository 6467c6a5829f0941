-- The number of data files and of records of one snapshot of a table's
-- main branch, counted from the rows as plan_files.sql reads them; they
-- must equal the snapshot summary's total-data-files and total-records
-- for the rows to be trusted.
-- $1 table id, $2 the snapshot's sequence number, $3 the ids of the
-- snapshot and its ancestors.
WITH files AS (
    SELECT record_count, committed_snapshot_id, removed_snapshot_id
    FROM data_files
    WHERE table_id = $1 AND committed_snapshot_id IS NOT NULL
    UNION ALL
    SELECT record_count, committed_snapshot_id, removed_snapshot_id
    FROM tail_files
    WHERE table_id = $1
), lineage AS (
    SELECT DISTINCT id FROM unnest($3::bigint[]) AS a (id)
)
SELECT count(*), coalesce(sum(f.record_count), 0)::bigint
FROM files f
LEFT JOIN lineage ca ON ca.id = f.committed_snapshot_id
LEFT JOIN snapshots c ON c.table_id = $1 AND c.snapshot_id = f.committed_snapshot_id
LEFT JOIN lineage ra ON ra.id = f.removed_snapshot_id
LEFT JOIN snapshots r ON r.table_id = $1 AND r.snapshot_id = f.removed_snapshot_id
WHERE (ca.id IS NOT NULL OR c.snapshot_id IS NULL OR (c.expired_at IS NOT NULL AND c.sequence_number <= $2))
  AND NOT (f.removed_snapshot_id IS NOT NULL
           AND (ra.id IS NOT NULL OR r.snapshot_id IS NULL
                OR (r.expired_at IS NOT NULL AND r.sequence_number <= $2)));
