-- +goose Up

-- History as long as Kafka keeps the data (docs/design.md §4.6). Snapshot
-- expiry thins the history, so the snapshot that removed a file may be
-- collected while an older snapshot that lists the file is retained. A data
-- file or tail file row therefore keeps the sequence numbers of the
-- snapshots that committed and removed it: the snapshots of branch main
-- that list it are those with a sequence number in [committed, removed),
-- and collection deletes a removed row only when no remaining snapshot row
-- has one (collect_data_files.sql).
ALTER TABLE data_files ADD COLUMN committed_sequence_number bigint,
                       ADD COLUMN removed_sequence_number bigint;
ALTER TABLE tail_files ADD COLUMN committed_sequence_number bigint,
                       ADD COLUMN removed_sequence_number bigint;
-- Backfill. A committing snapshot whose row is gone counts from 0 (keeps
-- the row longer, never shorter); a removing snapshot whose row is gone
-- counts as 0, as collection did until now.
UPDATE data_files d
SET committed_sequence_number = coalesce((SELECT s.sequence_number FROM snapshots s
                                          WHERE s.table_id = d.table_id AND s.snapshot_id = d.committed_snapshot_id), 0)
WHERE d.committed_snapshot_id IS NOT NULL;
UPDATE data_files d
SET removed_sequence_number = coalesce((SELECT s.sequence_number FROM snapshots s
                                        WHERE s.table_id = d.table_id AND s.snapshot_id = d.removed_snapshot_id), 0)
WHERE d.removed_snapshot_id IS NOT NULL;
UPDATE tail_files f
SET committed_sequence_number = coalesce((SELECT s.sequence_number FROM snapshots s
                                          WHERE s.table_id = f.table_id AND s.snapshot_id = f.committed_snapshot_id), 0);
UPDATE tail_files f
SET removed_sequence_number = coalesce((SELECT s.sequence_number FROM snapshots s
                                        WHERE s.table_id = f.table_id AND s.snapshot_id = f.removed_snapshot_id), 0)
WHERE f.removed_snapshot_id IS NOT NULL;
CREATE INDEX snapshots_sequence ON snapshots (table_id, sequence_number);

-- +goose Down
DROP INDEX snapshots_sequence;
ALTER TABLE tail_files DROP COLUMN removed_sequence_number, DROP COLUMN committed_sequence_number;
ALTER TABLE data_files DROP COLUMN removed_sequence_number, DROP COLUMN committed_sequence_number;
