-- +goose Up

-- Rewrites of committed data files by the writer (docs/design.md §4.5, §4.6):
-- expiry below Kafka's log start ("delete" and "overwrite" snapshots) and
-- re-indexing of a file whose rebuild no longer matches its checksum (log
-- compaction). A replaced or dropped file keeps its row, marked with the
-- snapshot that removed it, so that older snapshots can still name it; it is
-- no longer live. The replacement is a row of its own, committed in that
-- snapshot.
ALTER TABLE data_files ADD COLUMN removed_snapshot_id bigint;
-- Set by the data file builder when a rebuild differs from the recorded
-- checksum; the writer then rebuilds the file from what Kafka holds now and
-- replaces it (overwrite).
ALTER TABLE data_files ADD COLUMN needs_rebuild boolean NOT NULL DEFAULT false;
-- A replacement of the same range (after compaction) needs a key of its
-- own: generation n > 0 names it "<start>-<end>-<version>-g<n>.parquet".
ALTER TABLE data_files ADD COLUMN generation int NOT NULL DEFAULT 0;
-- Only one live file per (table, partition, start).
ALTER TABLE data_files DROP CONSTRAINT data_files_pkey;
CREATE UNIQUE INDEX data_files_live ON data_files (table_id, partition, start_offset) WHERE removed_snapshot_id IS NULL;
CREATE INDEX data_files_start ON data_files (table_id, partition, start_offset);

-- +goose Down
DROP INDEX data_files_start;
DROP INDEX data_files_live;
DELETE FROM data_files WHERE removed_snapshot_id IS NOT NULL;
ALTER TABLE data_files ADD PRIMARY KEY (table_id, partition, start_offset);
ALTER TABLE data_files DROP COLUMN generation, DROP COLUMN needs_rebuild, DROP COLUMN removed_snapshot_id;
