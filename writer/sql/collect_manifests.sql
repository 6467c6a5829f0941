-- Delete the manifest lists of collected snapshots, and those of their
-- manifests that no remaining snapshot lists (rows from before manifests
-- were recorded may list any manifest).
-- $1 table id, $2 manifest list keys, $3 manifest keys.
DELETE FROM metadata_files m
WHERE m.table_id = $1
  AND (m.path = ANY($2)
       OR (m.path = ANY($3)
           AND NOT EXISTS (SELECT 1 FROM snapshots s
                           WHERE s.table_id = $1 AND (s.manifests IS NULL OR m.path = ANY(s.manifests)))));
