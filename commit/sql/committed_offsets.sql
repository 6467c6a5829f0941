-- Per partition, the least content end of the given tables: the offset
-- below which every record with a row in any of them is in its current
-- snapshot (docs/design.md §4.4). A partition no commit of a table reached
-- yet ends, for that table, at its start offset. Of one table, these are
-- its content ends, which every commit builds on; of a table and its
-- dead-letter table, its committed offsets, which `mink table status`
-- shows: one formula, so status never disagrees with what a load returns.
-- $1 table ids, $2 id of the table that owns the partitions (the table
-- itself, or the parent of a dead-letter table).
SELECT p.partition, min(coalesce(c.end_offset, p.start_offset))
FROM partitions p
CROSS JOIN unnest($1::bigint[]) AS t(id)
LEFT JOIN content_ends c ON c.table_id = t.id AND c.partition = p.partition
WHERE p.table_id = $2
GROUP BY p.partition;
