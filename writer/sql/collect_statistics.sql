-- Delete Puffin statistics files the current metadata does not name (their
-- snapshot expired, or a newer file replaced them), after the same short
-- delay as metadata JSON files (collect_metadata_json.sql).
-- $1 table id, $2 keys to keep, $3 delay in microseconds.
DELETE FROM metadata_files
WHERE table_id = $1 AND path LIKE '%.puffin' AND NOT (path = ANY($2))
  AND created_at < now() - $3 * interval '1 microsecond';
