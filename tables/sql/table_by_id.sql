-- The table with an id, in the columns scanTable reads.
-- $1 table id.
SELECT id, namespace, name, topic, value_format, key_format, schema_json, start, properties,
       table_uuid, location, dlq_of, metadata_location, current_snapshot_id, last_sequence_number
FROM tables
WHERE id = $1;
