-- Delete the Puffin statistics files of collected snapshots: those the
-- current metadata does not name whose snapshot has no row any more
-- (collect_snapshots.sql deletes it CollectAfter after it expired, as it
-- does its manifest list). The snapshot id is in the file's name
-- (icebergmeta.StatisticsLocation: <snapshot id>-<uuid>.stats.puffin).
-- $1 table id, $2 keys the current metadata names.
DELETE FROM metadata_files m
WHERE m.table_id = $1 AND m.path LIKE '%.stats.puffin' AND NOT (m.path = ANY($2))
  AND NOT EXISTS (SELECT 1 FROM snapshots s
                  WHERE s.table_id = $1
                    AND s.snapshot_id = substring(m.path FROM '/(-?[0-9]+)-[^/]*\.stats\.puffin$')::bigint);
