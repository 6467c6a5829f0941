-- Per partition of a table, by partition: how many JSON fields matching no
-- column its indexed records had, and up to 10 example paths (counted once,
-- when their range was indexed).
-- $1 table id.
SELECT field_count, examples
FROM unknown_fields
WHERE table_id = $1
ORDER BY partition;
