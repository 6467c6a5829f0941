-- The unexpired snapshots of a table that list a data file or a tail file starting below its partition's log start
-- offset: Kafka no longer holds all of their records, so they can no longer
-- be read (docs/design.md §4.6). A snapshot of branch main lists the files
-- whose [committed, removed) sequence numbers hold its own; tagged
-- snapshots (off main, ref_name set) never expire here. Oldest first.
-- $1 table id, $2 partitions, $3 their log start offsets.
WITH below AS (
    SELECT d.committed_sequence_number AS c, d.removed_sequence_number AS r
    FROM data_files d JOIN unnest($2::int[], $3::bigint[]) AS o(partition, log_start) ON o.partition = d.partition
    WHERE d.table_id = $1 AND d.start_offset < o.log_start AND d.committed_sequence_number IS NOT NULL
    UNION ALL
    SELECT f.committed_sequence_number, f.removed_sequence_number
    FROM tail_files f JOIN unnest($2::int[], $3::bigint[]) AS o(partition, log_start) ON o.partition = f.partition
    WHERE f.table_id = $1 AND f.start_offset < o.log_start
)
SELECT s.snapshot_id
FROM snapshots s
WHERE s.table_id = $1 AND s.expired_at IS NULL AND s.ref_name IS NULL
  AND EXISTS (SELECT 1 FROM below b
              WHERE coalesce(b.c, 0) <= s.sequence_number AND (b.r IS NULL OR s.sequence_number < b.r))
ORDER BY s.sequence_number;
