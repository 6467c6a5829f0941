-- Every writer schema some tables have seen, for their status, by table.
-- $1 table ids.
SELECT table_id, role, registry_id, message_indexes, schema_id, error, created_at
FROM table_writer_schemas
WHERE table_id = ANY($1)
ORDER BY table_id, created_at, role, registry_id, message_indexes;
