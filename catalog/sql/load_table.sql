-- The committed state of table $2 of namespace $1 (levels joined by '.'):
-- its id, metadata location and the metadata JSON stored under it, its
-- location and its dead-letter table's (NULL for a dead-letter table),
-- which vended credentials cover (a re-created table's location is not
-- its name's, docs/design.md §4.1). $3 is the warehouse's location prefix
-- ('s3://<warehouse>/'); metadata_files is keyed by the location without
-- it. One statement, so the location and the file are read from the same
-- snapshot even while the writer swaps them.
SELECT t.id, t.metadata_location, f.content, t.location, d.location
FROM tables t
LEFT JOIN metadata_files f
    ON starts_with(t.metadata_location, $3)
   AND f.path = substr(t.metadata_location, length($3) + 1)
-- A name holding '~' is a dead-letter table's (tables.nameRE has none).
LEFT JOIN tables d
    ON d.namespace = t.namespace AND d.name = t.name || '~dlq'
WHERE t.namespace = $1 AND t.name = $2
