-- Record where indexing of a partition begins (docs/design.md §4.1): at a
-- table's creation, and when the topic gained the partition since. A
-- partition already recorded keeps its start offset.
-- $1 table id, $2 partition, $3 start offset.
INSERT INTO partitions (table_id, partition, start_offset)
VALUES ($1, $2, $3)
ON CONFLICT DO NOTHING;
