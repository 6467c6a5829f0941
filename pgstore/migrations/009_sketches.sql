-- +goose Up

-- Column sketches of a data file (docs/design.md §4.3, §4.6): the theta
-- sketches of its primitive columns by field id (datafile.Sketches'
-- encoding), computed when the file is built. The writer merges the
-- sketches of a snapshot's live files into its Puffin statistics file,
-- without reading any data. NULL for rows written before this migration:
-- a snapshot with such a file gets no statistics file.
ALTER TABLE data_files ADD COLUMN sketches bytea;
ALTER TABLE tail_files ADD COLUMN sketches bytea;

-- +goose Down
ALTER TABLE tail_files DROP COLUMN sketches;
ALTER TABLE data_files DROP COLUMN sketches;
