-- Record a tagged snapshot (docs/design.md §4.8): committed by the table's
-- writer (its lease, which the fencing trigger checks) for the tag
-- ref_name, off branch main.
-- $1 table id, $2 snapshot id, $3 parent snapshot id, $4 sequence number,
-- $5 manifest list, $6 metadata location, $7 lease scope, $8 lease holder,
-- $9 lease epoch, $10 manifest keys, $11 ref name, $12 the snapshot's
-- timestamp-ms, $13 its total-records, $14 its operation against its
-- parent (append, delete, overwrite, replace).
INSERT INTO snapshots (table_id, snapshot_id, parent_snapshot_id, sequence_number, operation, manifest_list,
                       metadata_location, lease_scope, lease_holder, lease_epoch, manifests, ref_name,
                       timestamp_ms, total_records)
VALUES ($1, $2, $3, $4, $14, $5, $6, $7, $8, $9, $10, $11, $12, $13);
