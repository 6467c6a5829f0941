-- +goose Up

-- Every table location ever given out (docs/design.md §4.1). A location is
-- never given out twice: a table created with the name of a deleted one
-- gets <location>-<its uuid>, so a data file key names one table's bytes
-- for good, and a node's cache, which serves a cached key without asking
-- PostgreSQL, never serves the deleted table's file for its successor.
CREATE TABLE table_locations (
    location    text PRIMARY KEY,
    created_at  timestamptz NOT NULL DEFAULT now()
);
INSERT INTO table_locations (location) SELECT location FROM tables ON CONFLICT DO NOTHING;

-- +goose Down
DROP TABLE table_locations;
