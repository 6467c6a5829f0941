-- A table's schema versions above one, oldest first.
-- $1 table id, $2 the version to start after (-1: all).
SELECT schema_json FROM table_schemas
WHERE table_id = $1 AND schema_id > $2
ORDER BY schema_id;
