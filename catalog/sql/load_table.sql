-- The committed state of table $2 of namespace $1 (levels joined by '.'):
-- its id, metadata location and the metadata JSON stored under it. $3 is
-- the warehouse's location prefix ('s3://<warehouse>/'); metadata_files is
-- keyed by the location without it. One statement, so the location and the
-- file are read from the same snapshot even while the writer swaps them.
SELECT t.id, t.metadata_location, f.content
FROM tables t
LEFT JOIN metadata_files f
    ON starts_with(t.metadata_location, $3)
   AND f.path = substr(t.metadata_location, length($3) + 1)
WHERE t.namespace = $1 AND t.name = $2
