-- Delete metadata JSON files that are neither current nor in the current
-- metadata's metadata-log. Engines get a table's metadata inline in the
-- table load, so an old one is not read again; a short delay covers a
-- reader that fetches the file of a load it just got.
-- $1 table id, $2 keys to keep, $3 delay in microseconds.
DELETE FROM metadata_files
WHERE table_id = $1 AND path LIKE '%.metadata.json' AND NOT (path = ANY($2))
  AND created_at < now() - $3 * interval '1 microsecond';
