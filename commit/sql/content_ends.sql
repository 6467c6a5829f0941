-- Per partition, the offset below which every record with a row in the
-- table is in its current snapshot; a partition no commit reached yet ends
-- at its start offset.
-- $1 table id, $2 id of the table that owns the partitions (the table
-- itself, or the parent of a dead-letter table).
SELECT p.partition, coalesce(c.end_offset, p.start_offset)
FROM partitions p
LEFT JOIN content_ends c ON c.table_id = $1 AND c.partition = p.partition
WHERE p.table_id = $2;
