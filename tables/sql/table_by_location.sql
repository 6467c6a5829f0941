-- The table at a location (s3://<warehouse>/<key>), in the columns
-- scanTable reads.
-- $1 location.
SELECT id, namespace, name, topic, value_format, key_format, schema_json, start, properties,
       table_uuid, location, dlq_of, metadata_location, current_snapshot_id, last_sequence_number
FROM tables
WHERE location = $1;
