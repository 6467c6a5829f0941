-- +goose Up

-- Lease reads that cost what changed (cluster/view.go, docs/design.md
-- §3.3). Each node keeps a view of the lease table and, every round, reads
-- only the rows changed since its previous read, the rows deleted since,
-- and the holdings that have expired. "Since" is a snapshot, not a clock or
-- a sequence: a transaction that took a number before the reader's snapshot
-- and committed after it would be missed by "greater than the last number
-- seen", never by "not visible in the last snapshot".

-- changed is the transaction that last set a column the view holds (scope,
-- table, kind, partition, holder, epoch): a take, a release, an insert.
-- A renewal only moves expires_at and leaves it alone, so renewals stay
-- cheap and invisible to the readers; an expiry changes no row, and every
-- read asks for the expired holdings instead.
ALTER TABLE leases ADD COLUMN changed xid8;
UPDATE leases SET changed = pg_current_xact_id();
ALTER TABLE leases ALTER COLUMN changed SET NOT NULL;
CREATE INDEX leases_changed ON leases (changed);

-- +goose StatementBegin
CREATE FUNCTION mink_lease_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.changed := pg_current_xact_id();
    RETURN NEW;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER leases_changed_insert BEFORE INSERT ON leases
    FOR EACH ROW EXECUTE FUNCTION mink_lease_changed();
-- Also when changed itself is written: it always names a writer.
CREATE TRIGGER leases_changed_update BEFORE UPDATE ON leases
    FOR EACH ROW
    WHEN (OLD.holder IS DISTINCT FROM NEW.holder OR OLD.epoch IS DISTINCT FROM NEW.epoch
          OR OLD.scope IS DISTINCT FROM NEW.scope OR OLD.table_id IS DISTINCT FROM NEW.table_id
          OR OLD.kind IS DISTINCT FROM NEW.kind OR OLD.partition IS DISTINCT FROM NEW.partition
          OR OLD.changed IS DISTINCT FROM NEW.changed)
    EXECUTE FUNCTION mink_lease_changed();

-- No index on expires_at: the expired holdings are found by a scan inside
-- Postgres that returns only them. An index would make every renewal
-- update every index of the row (no HOT update): measured with 30 nodes on
-- 10,200 leases (bench scale, B), renewals took 4.4 ms instead of 1.6 and
-- the round's Postgres time rose from 4.4 to 7.5 ms, while the scan costs
-- about 0.5 ms per 10,000 leases.

-- Tombstones: a lease row deleted (its table dropped) or renamed (scope
-- changed), by the transaction deleted. Kept about an hour: pruned by the
-- deletes that come after.
CREATE TABLE lease_deletions (
    scope    text NOT NULL,
    table_id bigint NOT NULL,
    deleted  xid8 NOT NULL DEFAULT pg_current_xact_id(),
    at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX lease_deletions_deleted ON lease_deletions (deleted);
CREATE INDEX lease_deletions_at ON lease_deletions (at);

-- A view whose snapshot has not seen every transaction up to through
-- (inclusive) may have missed a tombstone since pruned, or a TRUNCATE: it
-- reads the lease table in full. One row.
CREATE TABLE lease_deletions_pruned (
    id      int PRIMARY KEY CHECK (id = 1),
    through xid8 NOT NULL
);
INSERT INTO lease_deletions_pruned VALUES (1, '0');

-- +goose StatementBegin
CREATE FUNCTION mink_lease_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO lease_deletions (scope, table_id) VALUES (OLD.scope, OLD.table_id);
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER leases_deleted AFTER DELETE ON leases
    FOR EACH ROW EXECUTE FUNCTION mink_lease_deleted();
CREATE TRIGGER leases_renamed AFTER UPDATE ON leases
    FOR EACH ROW WHEN (OLD.scope IS DISTINCT FROM NEW.scope)
    EXECUTE FUNCTION mink_lease_deleted();

-- Pruning: once per deleting statement, tombstones older than an hour go,
-- and through moves past them. SKIP LOCKED: two drops at once never wait
-- for each other's tombstones; the pruned row is locked only when something
-- was pruned.
-- +goose StatementBegin
CREATE FUNCTION mink_lease_deletions_prune() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    WITH gone AS (
        DELETE FROM lease_deletions
        WHERE ctid IN (SELECT ctid FROM lease_deletions WHERE at < now() - interval '1 hour' FOR UPDATE SKIP LOCKED)
        RETURNING deleted
    )
    UPDATE lease_deletions_pruned
    SET through = greatest(through, (SELECT max(deleted) FROM gone))
    WHERE EXISTS (SELECT 1 FROM gone);
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER leases_deleted_prune AFTER DELETE ON leases
    FOR EACH STATEMENT EXECUTE FUNCTION mink_lease_deletions_prune();

-- TRUNCATE deletes without row triggers: every view reads in full.
-- +goose StatementBegin
CREATE FUNCTION mink_leases_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE lease_deletions_pruned SET through = greatest(through, pg_current_xact_id());
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER leases_truncated AFTER TRUNCATE ON leases
    FOR EACH STATEMENT EXECUTE FUNCTION mink_leases_truncated();

-- +goose Down
DROP TRIGGER leases_truncated ON leases;
DROP TRIGGER leases_deleted_prune ON leases;
DROP TRIGGER leases_renamed ON leases;
DROP TRIGGER leases_deleted ON leases;
DROP FUNCTION mink_leases_truncated(), mink_lease_deletions_prune(), mink_lease_deleted();
DROP TABLE lease_deletions_pruned, lease_deletions;
DROP TRIGGER leases_changed_update ON leases;
DROP TRIGGER leases_changed_insert ON leases;
DROP FUNCTION mink_lease_changed();
ALTER TABLE leases DROP COLUMN changed;
