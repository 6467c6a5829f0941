-- Every writer schema a table has seen, for its status.
-- $1 table id.
SELECT role, registry_id, message_indexes, schema_id, error, created_at
FROM table_writer_schemas
WHERE table_id = $1
ORDER BY created_at, role, registry_id, message_indexes;
