-- +goose Up

-- Transient objects of zero-lag table loads (docs/design.md §4.4): data files built
-- from the tail of Kafka past the committed snapshot, and the metadata
-- files of the child snapshot that lists them. They live for a short
-- lifetime and are then collected.
ALTER TABLE metadata_files ADD COLUMN expires_at timestamptz;
CREATE INDEX metadata_files_expiring ON metadata_files (expires_at) WHERE expires_at IS NOT NULL;

CREATE TABLE tail_files (
    path            text PRIMARY KEY, -- object key below the warehouse
    table_id        bigint NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
    partition       int NOT NULL,
    start_offset    bigint NOT NULL,
    end_offset      bigint NOT NULL,
    encoder_version int NOT NULL,
    file_size       bigint NOT NULL,
    sha256          bytea NOT NULL,
    record_count    bigint NOT NULL,
    stats           jsonb NOT NULL,
    expires_at      timestamptz NOT NULL
);
CREATE INDEX tail_files_expiring ON tail_files (expires_at);

-- A transient snapshot is reused by every load that sees the same
-- committed metadata and the same tail, so that loads in a row answer the
-- same metadata (and ETag) and build nothing twice.
CREATE TABLE transient_snapshots (
    table_id           bigint NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
    base_location      text NOT NULL,
    tail               text NOT NULL, -- "<partition>:<start>-<end>,…"
    snapshot_id        bigint NOT NULL,
    metadata_location  text NOT NULL,
    expires_at         timestamptz NOT NULL,
    PRIMARY KEY (table_id, base_location, tail)
);

-- +goose Down
DROP TABLE transient_snapshots, tail_files;
ALTER TABLE metadata_files DROP COLUMN expires_at;
