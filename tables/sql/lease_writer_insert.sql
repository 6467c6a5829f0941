-- Create the writer lease of a new table, free (docs/design.md §3.2).
-- $1 scope (tables.WriterScope), $2 table id.
INSERT INTO leases (scope, table_id, kind)
VALUES ($1, $2, 'writer');
