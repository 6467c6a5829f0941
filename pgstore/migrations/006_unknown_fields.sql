-- +goose Up

-- JSON fields that matched no column (docs/design.md §4.2: left out of the row and
-- counted, or the reason of a dead letter), per partition of a table. The
-- indexer adds a range's count in the transaction that inserts the range,
-- so a fenced insert counts nothing and a rebuild of the range (serving,
-- tail, re-indexing) never counts again. examples holds the first distinct
-- field paths seen (e.g. "address.zip"), at most 10.
CREATE TABLE unknown_fields (
    table_id     bigint NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
    partition    int NOT NULL,
    field_count  bigint NOT NULL,
    examples     text[] NOT NULL,
    PRIMARY KEY (table_id, partition)
);

-- +goose Down
DROP TABLE unknown_fields;
