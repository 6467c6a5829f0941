-- Where a partition's indexer starts (docs/design.md §4.3): the end of its
-- last indexed range, or the table's start offset before the first.
-- $1 table id, $2 partition.
SELECT coalesce((SELECT max(end_offset) FROM ranges WHERE table_id = $1 AND partition = $2),
                (SELECT start_offset FROM partitions WHERE table_id = $1 AND partition = $2));
