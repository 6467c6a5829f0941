-- +goose Up

-- Registry schemas Mink has used, by the registry's id (docs/design.md
-- §4.7): decoding, rebuilds of data files and zero-lag tails never ask the
-- registry again for an id stored here. schema is wire.Schema's JSON (type,
-- text, references resolved).
CREATE TABLE registry_schemas (
    id          int PRIMARY KEY,
    schema      jsonb NOT NULL,
    fetched_at  timestamptz NOT NULL DEFAULT now()
);

-- A table's schema versions (Iceberg schema ids, 0 first). tables.schema_json
-- is the newest; every data file records the version it was encoded with
-- (data_files.schema_id, and "-s<id>" in its key past version 0) and is
-- rebuilt with it. Fields are never removed from a version to the next,
-- so the highest field id of the newest version is the table's
-- last-column-id.
CREATE TABLE table_schemas (
    table_id        bigint NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
    schema_id       int NOT NULL,
    schema_json     jsonb NOT NULL,
    -- what made this version: "create", "registry schema <id>", "inferred",
    -- "alter".
    reason          text NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (table_id, schema_id)
);

INSERT INTO table_schemas (table_id, schema_id, schema_json, reason)
SELECT id, schema_id, schema_json, 'create' FROM tables;

-- Which table schema version holds the records written with a registry
-- schema (role key or value; message_indexes for Protobuf, '' otherwise),
-- decided once, under the table's row lock: schema_id, or error when
-- Iceberg's evolution rules do not allow the change (or the registry does
-- not know the id); such records are dead letters with error as reason.
CREATE TABLE table_writer_schemas (
    table_id         bigint NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
    role             text NOT NULL CHECK (role IN ('key', 'value')),
    registry_id      int NOT NULL,
    message_indexes  text NOT NULL DEFAULT '',
    schema_id        int,
    error            text,
    created_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (table_id, role, registry_id, message_indexes),
    CHECK ((schema_id IS NULL) <> (error IS NULL))
);

-- +goose Down
DROP TABLE table_writer_schemas;
DROP TABLE table_schemas;
DROP TABLE registry_schemas;
