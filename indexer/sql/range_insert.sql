-- Record an indexed range under the partition lease: the fencing trigger
-- checks the epoch (docs/design.md §3.2) and that the range starts where the
-- partition's last one ended.
-- $1 table id, $2 partition, $3 start offset, $4 end offset, $5 records
-- read (rows and dead letters), $6 lease scope, $7 lease holder, $8 lease
-- epoch.
INSERT INTO ranges (table_id, partition, start_offset, end_offset, record_count, lease_scope, lease_holder, lease_epoch)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8);
