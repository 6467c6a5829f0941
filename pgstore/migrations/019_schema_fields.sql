-- +goose Up

-- What the registry schemas behind a table's schema version say of its
-- fields beyond their Iceberg types (docs/design.md §4.7): by Iceberg
-- field id, an Avro default (for writers that lack the field) and aliases
-- (names older writers gave it), codec/avro.Fields as JSON. Fixed with the
-- version, as the version's columns are: a data file's values are a
-- function of its version. json, not jsonb: a default may hold U+0000 (a
-- bytes decimal 0.00 is "\u0000"), which jsonb cannot store.
ALTER TABLE table_schemas ADD COLUMN fields json NOT NULL DEFAULT '{}';

-- +goose Down
ALTER TABLE table_schemas DROP COLUMN fields;
