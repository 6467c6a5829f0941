-- Mark the snapshots a commit removed from the metadata as expired; the
-- writer's collection deletes them and what only they referenced later.
-- $1 table id, $2 snapshot ids.
UPDATE snapshots SET expired_at = now()
WHERE table_id = $1 AND snapshot_id = ANY($2) AND expired_at IS NULL;
