-- +goose Up

-- Each node's max_partitions (0 = no cap), so that every node computes
-- the same per-node bounds (docs/design.md §3.3, §7.1): a node planned with
-- its own cap for everyone, and one node with a smaller cap left
-- partitions that nobody's bound covered unheld.
ALTER TABLE nodes ADD COLUMN max_partitions integer NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE nodes DROP COLUMN max_partitions;
