-- How far back the history of some tables reaches (docs/design.md §4.6):
-- per table, main's retained snapshots (rows not expired and of no tag:
-- the snapshot-log's entries, what FOR TIMESTAMP AS OF picks from; the
-- tags' snapshots are refs.sql's), and the timestamp-ms of main's oldest
-- retained snapshot, the first snapshot-log entry: the earliest time FOR
-- TIMESTAMP AS OF reaches. A row from before migration 017 has no
-- timestamp-ms and counts its commit time. One row per table that has a
-- snapshot, main's or a tag's (then 0 and NULL: a tag before main's
-- first commit).
-- $1 table ids.
SELECT table_id, count(*) FILTER (WHERE ref_name IS NULL),
       min(coalesce(timestamp_ms, (extract(epoch FROM committed_at) * 1000)::bigint)) FILTER (WHERE ref_name IS NULL)
FROM snapshots
WHERE table_id = ANY($1) AND expired_at IS NULL
GROUP BY table_id;
