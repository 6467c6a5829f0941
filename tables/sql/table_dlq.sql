-- The dead-letter table of a table, in the columns scanTable reads.
-- $1 id of the table whose dead letters it holds.
SELECT id, namespace, name, topic, value_format, key_format, schema_json, start, properties,
       table_uuid, location, dlq_of, metadata_location, current_snapshot_id, last_sequence_number
FROM tables
WHERE dlq_of = $1;
