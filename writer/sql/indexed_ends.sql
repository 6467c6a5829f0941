-- Per partition, the end of the last indexed range: every record below it
-- has its data file (or has no row in a table, and then no file there).
-- $1 id of the table that owns the ranges.
SELECT partition, max(end_offset) FROM ranges WHERE table_id = $1 GROUP BY partition;
