-- +goose Up

-- The writers' one look at their tables each commit interval
-- (writer/sql/watch.sql, docs/design.md §4.6) asks whether a table has a
-- data file marked for re-indexing: found by this index, not by reading
-- every file of the table.
CREATE INDEX data_files_needs_rebuild ON data_files (table_id) WHERE needs_rebuild;

-- +goose Down
DROP INDEX data_files_needs_rebuild;
