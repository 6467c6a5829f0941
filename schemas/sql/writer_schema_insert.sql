-- Decide, once, which table schema version holds a writer schema's records
-- (schema id) or why they are dead letters (error). Run under the table's
-- row lock after reading writer_schema.sql in the same transaction.
-- $1 table id, $2 role (key | value), $3 registry id, $4 message indexes,
-- $5 schema id (NULL with an error), $6 error (NULL with a schema id).
INSERT INTO table_writer_schemas (table_id, role, registry_id, message_indexes, schema_id, error)
VALUES ($1, $2, $3, $4, $5, $6);
