-- How many partitions a table has leases for; the writer adds the ones the
-- topic gained.
-- $1 table id.
SELECT count(*) FROM partitions WHERE table_id = $1;
