-- The table named namespace.name, in the columns scanTable reads.
-- $1 namespace (levels joined by '.'), $2 name.
SELECT id, namespace, name, topic, value_format, key_format, schema_json, start, properties,
       table_uuid, location, dlq_of, metadata_location, current_snapshot_id, last_sequence_number
FROM tables
WHERE namespace = $1 AND name = $2;
