-- Move content ends forward in a commit's transaction (never back).
-- $1 table id, $2 partitions, $3 end offsets.
INSERT INTO content_ends (table_id, partition, end_offset)
SELECT $1, e.partition, e.end_offset
FROM unnest($2::int[], $3::bigint[]) AS e(partition, end_offset)
ON CONFLICT (table_id, partition)
DO UPDATE SET end_offset = greatest(content_ends.end_offset, excluded.end_offset);
