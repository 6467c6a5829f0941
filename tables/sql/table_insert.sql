-- Store a table definition (or its dead-letter table's) with its initial
-- metadata location. A name that is taken fails with unique_violation
-- (23505).
-- $1 namespace (levels joined by '.'), $2 name, $3 topic, $4 value format,
-- $5 key format, $6 schema JSON, $7 start (earliest | latest),
-- $8 properties JSON, $9 table uuid, $10 location, $11 id of the table
-- whose dead letters it holds (NULL for a table), $12 metadata location.
INSERT INTO tables (namespace, name, topic, value_format, key_format, schema_json, start, properties,
                    table_uuid, location, dlq_of, metadata_location)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
RETURNING id;
