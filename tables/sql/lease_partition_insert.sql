-- Create the partition lease of a partition, free (docs/design.md §3.2).
-- The insert notifies the cluster's channel, so nodes take it at once
-- (§3.3). A lease that exists is left as it is.
-- $1 scope (tables.PartitionScope), $2 table id, $3 partition.
INSERT INTO leases (scope, table_id, kind, partition)
VALUES ($1, $2, 'partition', $3)
ON CONFLICT DO NOTHING;
