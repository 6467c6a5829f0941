-- The refs other than main of some tables: the tags (consumer-group tags,
-- docs/design.md §4.8), each the snapshot row committed for it and not
-- expired (a moved tag's old row is), with its timestamp-ms (or commit
-- time, before migration 017) and total-records (NULL before 017).
-- $1 table ids.
SELECT table_id, ref_name, snapshot_id,
       coalesce(timestamp_ms, (extract(epoch FROM committed_at) * 1000)::bigint), total_records
FROM snapshots
WHERE table_id = ANY($1) AND expired_at IS NULL AND ref_name IS NOT NULL
ORDER BY table_id, ref_name;
