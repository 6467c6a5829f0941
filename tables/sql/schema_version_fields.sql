-- The fields of one schema version of a table (codec/avro.Fields JSON:
-- Avro defaults and aliases by field id; '{}' when none).
-- $1 table id, $2 schema id.
SELECT fields FROM table_schemas WHERE table_id = $1 AND schema_id = $2;
