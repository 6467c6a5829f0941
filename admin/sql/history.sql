-- How far back the history of some tables reaches (docs/design.md §4.6):
-- per table, the snapshots its metadata holds (rows not expired: main's
-- retained ones and the tags'), and the timestamp-ms of main's oldest
-- retained snapshot, the first snapshot-log entry: the earliest time FOR
-- TIMESTAMP AS OF reaches. A row from before migration 017 has no
-- timestamp-ms and counts its commit time. One row per table that has a
-- snapshot.
-- $1 table ids.
SELECT table_id, count(*),
       min(coalesce(timestamp_ms, (extract(epoch FROM committed_at) * 1000)::bigint)) FILTER (WHERE ref_name IS NULL)
FROM snapshots
WHERE table_id = ANY($1) AND expired_at IS NULL
GROUP BY table_id;
