-- Delete the rows of snapshots that expired more than the collection delay
-- ago, returning their manifest lists and manifests.
-- $1 table id, $2 collection delay in microseconds.
DELETE FROM snapshots
WHERE table_id = $1 AND expired_at < now() - $2 * interval '1 microsecond'
RETURNING manifest_list, coalesce(manifests, '{}');
