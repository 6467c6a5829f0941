-- Per partition of some tables, by table id and partition: how many JSON
-- fields matching no column its indexed records had, and up to 10 example
-- paths (counted once, when their range was indexed).
-- $1 table ids.
SELECT table_id, field_count, examples
FROM unknown_fields
WHERE table_id = ANY($1)
ORDER BY table_id, partition;
