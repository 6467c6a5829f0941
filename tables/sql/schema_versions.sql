-- The schema versions above one of some tables, by table, oldest first.
-- $1 table ids, $2 the version to start after (-1: all).
SELECT table_id, schema_json FROM table_schemas
WHERE table_id = ANY($1) AND schema_id > $2
ORDER BY table_id, schema_id;
