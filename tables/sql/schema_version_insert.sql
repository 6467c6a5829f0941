-- Store a schema version of a table (docs/design.md §4.7) and make it the
-- table's newest: tables.schema_json and schema_id. Versions are
-- consecutive; a second insert of one version fails (unique_violation), so
-- two nodes cannot both add version n.
-- $1 table id, $2 schema id, $3 schema JSON, $4 reason ("create",
-- "registry schema 7", "inferred", "alter"), $5 the version's fields
-- (codec/avro.Fields JSON; NULL: none).
WITH v AS (
    INSERT INTO table_schemas (table_id, schema_id, schema_json, reason, fields)
    VALUES ($1, $2, $3, $4, COALESCE($5::json, '{}'))
)
UPDATE tables SET schema_json = $3, schema_id = $2
WHERE id = $1;
