-- +goose Up

-- Snapshot expiry and collection (docs/design.md §4.6). A commit removes the
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
-- Marking a snapshot expired is not a write by the lease holder that
-- committed it: the fencing trigger checks a row's lease only when that
-- lease is set (an insert, or an update of the lease columns). The writer
-- that sets expired_at is fenced by the snapshot it inserts in the same
-- transaction; otherwise a new holder could never expire the snapshots of
-- an earlier epoch.
DROP TRIGGER snapshots_fence ON snapshots;
CREATE TRIGGER snapshots_fence BEFORE INSERT OR UPDATE OF lease_scope, lease_holder, lease_epoch ON snapshots
    FOR EACH ROW EXECUTE FUNCTION mink_fence_row();

-- +goose Down
DROP TRIGGER snapshots_fence ON snapshots;
CREATE TRIGGER snapshots_fence BEFORE INSERT OR UPDATE ON snapshots
    FOR EACH ROW EXECUTE FUNCTION mink_fence_row();
DROP INDEX metadata_files_table;
DROP INDEX snapshots_expired;
ALTER TABLE snapshots DROP COLUMN expired_at, DROP COLUMN manifests;
