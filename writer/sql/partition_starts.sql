-- Where each partition of a table starts (its start offset).
-- $1 table id.
SELECT partition, start_offset FROM partitions WHERE table_id = $1;
