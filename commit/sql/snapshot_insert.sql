-- Record a new snapshot of a table. A writer's snapshot carries its lease
-- (scope, holder, epoch): the fencing trigger checks it and locks the lease
-- FOR SHARE until the commit ends. A table load's snapshot carries none.
-- $1 table id, $2 snapshot id, $3 parent snapshot id, $4 sequence number,
-- $5 operation, $6 manifest list, $7 metadata location, $8 lease scope,
-- $9 lease holder, $10 lease epoch, $11 manifest keys, $12 the snapshot's
-- timestamp-ms, $13 its total-records.
INSERT INTO snapshots (table_id, snapshot_id, parent_snapshot_id, sequence_number, operation, manifest_list,
                       metadata_location, lease_scope, lease_holder, lease_epoch, manifests, timestamp_ms, total_records)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13);
