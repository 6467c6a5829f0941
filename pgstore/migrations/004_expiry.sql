-- +goose Up

-- Snapshot expiry and collection (design §4.6). A commit removes the
-- snapshots past history.expire.max-snapshot-age-ms from the table metadata
-- and sets their expired_at; the writer's collection deletes their rows, and
-- the metadata files only they referenced, once transient snapshots built on
-- them can no longer be in use. manifests holds the keys of the manifests
-- the snapshot's manifest list names (NULL for rows written before this
-- migration, which block the collection of manifests while they exist).
ALTER TABLE snapshots ADD COLUMN manifests text[];
ALTER TABLE snapshots ADD COLUMN expired_at timestamptz;
CREATE INDEX snapshots_expired ON snapshots (table_id, expired_at) WHERE expired_at IS NOT NULL;
CREATE INDEX metadata_files_table ON metadata_files (table_id);

-- +goose Down
DROP INDEX metadata_files_table;
DROP INDEX snapshots_expired;
ALTER TABLE snapshots DROP COLUMN expired_at, DROP COLUMN manifests;
