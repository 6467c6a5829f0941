-- Per partition of each source table, the least content end of the
-- tables paired with it: the offset below which every record with a row
-- in any of them is in its current snapshot (docs/design.md §4.4). A
-- partition no commit of a table reached yet ends, for that table, at its
-- start offset. Of one table, these are its content ends, which every
-- commit builds on; of a table and its dead-letter table, its committed
-- offsets, which `mink table status` and the overview show: one formula,
-- so status never disagrees with what a load returns.
-- $1 ids of the tables that own the partitions (a table itself, or the
-- parent of a dead-letter table), $2 ids of the tables whose content ends
-- count, pairwise: the partitions of $1[i] end, for table $2[i], at its
-- content end. One row per (source table, partition).
SELECT g.src, p.partition, min(coalesce(c.end_offset, p.start_offset))
FROM unnest($1::bigint[], $2::bigint[]) AS g(src, id)
JOIN partitions p ON p.table_id = g.src
LEFT JOIN content_ends c ON c.table_id = g.id AND c.partition = p.partition
GROUP BY g.src, p.partition;
