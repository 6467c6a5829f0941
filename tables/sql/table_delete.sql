-- Delete a table (not a dead-letter table on its own); its dead-letter
-- table and every row they own go with it (ON DELETE CASCADE).
-- $1 namespace (levels joined by '.'), $2 name.
DELETE FROM tables
WHERE namespace = $1 AND name = $2 AND dlq_of IS NULL;
