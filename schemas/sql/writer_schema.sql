-- The table schema version that holds a writer schema's records, or why
-- they are dead letters.
-- $1 table id, $2 role (key | value), $3 registry id, $4 message indexes.
SELECT schema_id, error FROM table_writer_schemas
WHERE table_id = $1 AND role = $2 AND registry_id = $3 AND message_indexes = $4;
