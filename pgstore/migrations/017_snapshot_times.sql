-- +goose Up

-- What the overview shows of a table's history (docs/design.md §5: the
-- retained snapshots, how far back time travel reaches, each tag's
-- snapshot): a snapshot's Iceberg timestamp-ms (its snapshot-log entry's,
-- which FOR TIMESTAMP AS OF compares, not committed_at: another clock) and
-- its summary's total-records, kept in its row so that the overview reads
-- no metadata JSON. NULL in the rows of snapshots committed before.
ALTER TABLE snapshots ADD COLUMN timestamp_ms bigint,
                      ADD COLUMN total_records bigint;

-- +goose Down
ALTER TABLE snapshots DROP COLUMN total_records, DROP COLUMN timestamp_ms;
