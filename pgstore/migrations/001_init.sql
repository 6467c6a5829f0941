-- +goose Up

-- Cluster members (docs/design.md §3.1). expires_at is always computed from the
-- database clock, never a node's clock.
CREATE TABLE nodes (
    id            text PRIMARY KEY,
    -- A random token of the process that registered the row: a second live
    -- process with the same id cannot take the row over (or delete it).
    instance      text NOT NULL,
    advertise_url text NOT NULL,
    roles         text[] NOT NULL,
    started_at    timestamptz NOT NULL DEFAULT now(),
    expires_at    timestamptz NOT NULL
);

-- Tables (docs/design.md §4.1). A dead-letter table `<name>~dlq` is a row of its own
-- with dlq_of pointing at the table whose records it receives; it has no
-- leases: the parent's indexers and writer fill and commit it.
CREATE TABLE tables (
    id                     bigserial PRIMARY KEY,
    namespace              text NOT NULL,
    name                   text NOT NULL,
    topic                  text NOT NULL,
    value_format           text NOT NULL,
    key_format             text NOT NULL DEFAULT 'raw',
    -- Iceberg schema JSON with Mink's field ids (the _kafka column first).
    schema_json            jsonb NOT NULL,
    schema_id              int NOT NULL DEFAULT 0,
    start                  text NOT NULL DEFAULT 'earliest',
    properties             jsonb NOT NULL DEFAULT '{}',
    table_uuid             uuid NOT NULL,
    location               text NOT NULL,
    dlq_of                 bigint REFERENCES tables (id) ON DELETE CASCADE,
    -- The committed state, swapped by the writer (compare-and-swap on
    -- metadata_location, fenced by the writer lease).
    metadata_location      text NOT NULL,
    current_snapshot_id    bigint,
    last_sequence_number   bigint NOT NULL DEFAULT 0,
    created_at             timestamptz NOT NULL DEFAULT now(),
    UNIQUE (namespace, name)
);

-- Where indexing of each partition starts when it has no range yet: the
-- log start offset (start = earliest) or the high watermark (latest) read
-- when the table was created or the partition appeared.
CREATE TABLE partitions (
    table_id      bigint NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
    partition     int NOT NULL,
    start_offset  bigint NOT NULL,
    PRIMARY KEY (table_id, partition)
);

-- Leases (docs/design.md §3.2). scope is '<table id>/partition/<n>' or
-- '<table id>/writer'; the preference hash is computed over it.
CREATE TABLE leases (
    scope       text PRIMARY KEY,
    table_id    bigint NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
    kind        text NOT NULL CHECK (kind IN ('partition', 'writer')),
    partition   int,
    holder      text,
    epoch       bigint NOT NULL DEFAULT 0,
    expires_at  timestamptz,
    CHECK ((kind = 'partition') = (partition IS NOT NULL))
);
CREATE INDEX leases_holder ON leases (holder);

-- Indexed ranges (docs/design.md §4.3): [start_offset, end_offset) of one partition,
-- written under the partition lease epoch. Ranges of a partition are
-- contiguous: the fencing trigger rejects a gap or an overlap.
CREATE TABLE ranges (
    table_id      bigint NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
    partition     int NOT NULL,
    start_offset  bigint NOT NULL,
    end_offset    bigint NOT NULL,
    record_count  bigint NOT NULL, -- Kafka records read (rows + dead letters)
    lease_scope   text NOT NULL,
    lease_holder  text NOT NULL,
    lease_epoch   bigint NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (table_id, partition, start_offset),
    CHECK (end_offset > start_offset)
);

-- Data files: the deterministic encoding of one range for one table (the
-- table itself, or its dead-letter table). A range with no row for a table
-- has no data file there.
CREATE TABLE data_files (
    table_id         bigint NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
    partition        int NOT NULL,
    start_offset     bigint NOT NULL,
    end_offset       bigint NOT NULL,
    encoder_version  int NOT NULL,
    schema_id        int NOT NULL,
    path             text NOT NULL UNIQUE,
    file_size        bigint NOT NULL,
    sha256           bytea NOT NULL,
    record_count     bigint NOT NULL,
    stats            jsonb NOT NULL,
    min_timestamp    timestamptz,
    max_timestamp    timestamptz,
    committed_snapshot_id bigint,
    created_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (table_id, partition, start_offset)
);
CREATE INDEX data_files_uncommitted ON data_files (table_id) WHERE committed_snapshot_id IS NULL;

-- Snapshots committed by a table's writer, under the writer lease epoch.
CREATE TABLE snapshots (
    table_id            bigint NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
    snapshot_id         bigint NOT NULL,
    parent_snapshot_id  bigint,
    sequence_number     bigint NOT NULL,
    operation           text NOT NULL,
    manifest_list       text NOT NULL,
    metadata_location   text NOT NULL,
    lease_scope         text NOT NULL,
    lease_holder        text NOT NULL,
    lease_epoch         bigint NOT NULL,
    committed_at        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (table_id, snapshot_id)
);

-- Metadata files served by the S3 API: table metadata JSON, manifest lists
-- and manifests. path is the object key below the warehouse.
CREATE TABLE metadata_files (
    path        text PRIMARY KEY,
    table_id    bigint NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
    content     bytea NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);

-- mink_check_epoch is the fencing check of docs/design.md §3.2: it locks the lease
-- row FOR SHARE (so the lease cannot change hands until the caller's
-- transaction ends) and raises SQLSTATE MINKF unless (holder, epoch) is the
-- current, unexpired holding. Expiry is judged by clock_timestamp() because
-- the calling transaction may be long.
-- +goose StatementBegin
CREATE FUNCTION mink_check_epoch(p_scope text, p_holder text, p_epoch bigint)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    cur leases%ROWTYPE;
BEGIN
    SELECT * INTO cur FROM leases WHERE scope = p_scope FOR SHARE;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'MINKF',
            MESSAGE = format('lease %s does not exist', p_scope);
    END IF;
    IF cur.epoch <> p_epoch OR cur.holder IS DISTINCT FROM p_holder THEN
        RAISE EXCEPTION USING ERRCODE = 'MINKF',
            MESSAGE = format('lease %s epoch %s of %s is not current (epoch %s, holder %s)',
                             p_scope, p_epoch, p_holder, cur.epoch, coalesce(cur.holder, 'none'));
    END IF;
    IF cur.expires_at IS NULL OR cur.expires_at < clock_timestamp() THEN
        RAISE EXCEPTION USING ERRCODE = 'MINKF',
            MESSAGE = format('lease %s epoch %s of %s has expired', p_scope, p_epoch, p_holder);
    END IF;
END;
$$;
-- +goose StatementEnd

-- Every fenced row carries (lease_scope, lease_holder, lease_epoch); the
-- trigger checks it in the writer's own transaction.
-- +goose StatementBegin
CREATE FUNCTION mink_fence_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM mink_check_epoch(NEW.lease_scope, NEW.lease_holder, NEW.lease_epoch);
    RETURN NEW;
END;
$$;
-- +goose StatementEnd

CREATE TRIGGER snapshots_fence BEFORE INSERT OR UPDATE ON snapshots
    FOR EACH ROW EXECUTE FUNCTION mink_fence_row();

-- Ranges are fenced and contiguous: a new range must start where the
-- partition's last one ended (no gap, no overlap, docs/design.md §3.4).
-- +goose StatementBegin
CREATE FUNCTION mink_fence_range() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    last_end bigint;
BEGIN
    PERFORM mink_check_epoch(NEW.lease_scope, NEW.lease_holder, NEW.lease_epoch);
    SELECT max(end_offset) INTO last_end FROM ranges
        WHERE table_id = NEW.table_id AND partition = NEW.partition;
    IF last_end IS NOT NULL AND NEW.start_offset <> last_end THEN
        RAISE EXCEPTION USING ERRCODE = 'MINKR',
            MESSAGE = format('range [%s, %s) of table %s partition %s does not start at the indexed end %s',
                             NEW.start_offset, NEW.end_offset, NEW.table_id, NEW.partition, last_end);
    END IF;
    RETURN NEW;
END;
$$;
-- +goose StatementEnd

CREATE TRIGGER ranges_fence BEFORE INSERT OR UPDATE ON ranges
    FOR EACH ROW EXECUTE FUNCTION mink_fence_range();

-- +goose Down
DROP TABLE metadata_files, snapshots, data_files, ranges, leases, partitions, tables, nodes;
DROP FUNCTION mink_fence_range, mink_fence_row, mink_check_epoch;
