-- +goose Up

-- What the registry schemas behind a table's schema version say of its
-- fields beyond their Iceberg types (docs/design.md §4.7): by Iceberg
-- field id, an Avro default (for writers that lack the field) and aliases
-- (names older writers gave it), codec/avro.Fields as JSON. Fixed with the
-- version, as the version's columns are: a data file's values are a
-- function of its version.
ALTER TABLE table_schemas ADD COLUMN fields jsonb NOT NULL DEFAULT '{}';

-- +goose Down
ALTER TABLE table_schemas DROP COLUMN fields;
