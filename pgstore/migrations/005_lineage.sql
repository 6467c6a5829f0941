-- +goose Up

-- Lineage of zero-lag snapshots (docs/design.md §4.4). A table load that
-- finds Kafka ahead of the current snapshot commits a child snapshot with
-- tail data files onto branch main, exactly like the writer's commits: the
-- snapshot stays in the table's history until it expires, every later
-- snapshot descends from it, and its sequence number is never reused.
-- Commits of loads and of the writer serialize on the table's row
-- (SELECT … FOR NO KEY UPDATE); the writer's are also fenced by its lease epoch.

-- Per table (a table or its dead-letter table) and partition: the offset
-- below which every record with a row in that table is in its current
-- snapshot. Moved forward by every commit, in its transaction. A partition
-- without a row here ends at its start offset (partitions.start_offset).
CREATE TABLE content_ends (
    table_id    bigint NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
    partition   int NOT NULL,
    end_offset  bigint NOT NULL,
    PRIMARY KEY (table_id, partition)
);
-- Until now a table's content ended at its first uncommitted data file, or
-- at the end of the indexed ranges.
INSERT INTO content_ends (table_id, partition, end_offset)
SELECT t.id, p.partition,
       coalesce((SELECT min(d.start_offset) FROM data_files d
                 WHERE d.table_id = t.id AND d.partition = p.partition
                   AND d.committed_snapshot_id IS NULL AND d.removed_snapshot_id IS NULL),
                (SELECT max(g.end_offset) FROM ranges g WHERE g.table_id = p.table_id AND g.partition = p.partition),
                p.start_offset)
FROM tables t JOIN partitions p ON p.table_id = coalesce(t.dlq_of, t.id);

-- A load's snapshot holds no lease: its lease columns are NULL, and the
-- fencing trigger checks the rows that carry one (the writer's).
ALTER TABLE snapshots ALTER COLUMN lease_scope DROP NOT NULL,
                      ALTER COLUMN lease_holder DROP NOT NULL,
                      ALTER COLUMN lease_epoch DROP NOT NULL;
ALTER TABLE snapshots ADD CONSTRAINT snapshots_lease_all_or_none
    CHECK ((lease_scope IS NULL) = (lease_holder IS NULL) AND (lease_scope IS NULL) = (lease_epoch IS NULL));
DROP TRIGGER snapshots_fence ON snapshots;
CREATE TRIGGER snapshots_fence BEFORE INSERT OR UPDATE OF lease_scope, lease_holder, lease_epoch ON snapshots
    FOR EACH ROW WHEN (NEW.lease_scope IS NOT NULL) EXECUTE FUNCTION mink_fence_row();

-- Tail files are now committed data files of the snapshot that added them,
-- and removed (replaced by indexed data files) by a later one, like
-- data_files. Transient snapshots and their expiring objects are gone;
-- the ones in flight are dropped (a reader in the middle of one fails once).
DROP TABLE transient_snapshots;
DELETE FROM tail_files;
DELETE FROM metadata_files WHERE expires_at IS NOT NULL;
DROP INDEX tail_files_expiring;
ALTER TABLE tail_files DROP COLUMN expires_at;
ALTER TABLE tail_files ADD COLUMN committed_snapshot_id bigint NOT NULL;
ALTER TABLE tail_files ADD COLUMN removed_snapshot_id bigint;
CREATE INDEX tail_files_live ON tail_files (table_id, partition, start_offset) WHERE removed_snapshot_id IS NULL;
DROP INDEX metadata_files_expiring;
ALTER TABLE metadata_files DROP COLUMN expires_at;

-- +goose Down
ALTER TABLE metadata_files ADD COLUMN expires_at timestamptz;
CREATE INDEX metadata_files_expiring ON metadata_files (expires_at) WHERE expires_at IS NOT NULL;
DROP INDEX tail_files_live;
DELETE FROM tail_files;
ALTER TABLE tail_files DROP COLUMN removed_snapshot_id, DROP COLUMN committed_snapshot_id;
ALTER TABLE tail_files ADD COLUMN expires_at timestamptz NOT NULL;
CREATE INDEX tail_files_expiring ON tail_files (expires_at);
CREATE TABLE transient_snapshots (
    table_id           bigint NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
    base_location      text NOT NULL,
    tail               text NOT NULL,
    snapshot_id        bigint NOT NULL,
    metadata_location  text NOT NULL,
    expires_at         timestamptz NOT NULL,
    PRIMARY KEY (table_id, base_location, tail)
);
DROP TRIGGER snapshots_fence ON snapshots;
CREATE TRIGGER snapshots_fence BEFORE INSERT OR UPDATE OF lease_scope, lease_holder, lease_epoch ON snapshots
    FOR EACH ROW EXECUTE FUNCTION mink_fence_row();
ALTER TABLE snapshots DROP CONSTRAINT snapshots_lease_all_or_none;
DELETE FROM snapshots WHERE lease_scope IS NULL;
ALTER TABLE snapshots ALTER COLUMN lease_scope SET NOT NULL,
                      ALTER COLUMN lease_holder SET NOT NULL,
                      ALTER COLUMN lease_epoch SET NOT NULL;
DROP TABLE content_ends;
