-- A table's newest schema version (docs/design.md §4.7): a json table's
-- files use it from the moment `mink table alter` adds it, whatever
-- version the builder's copy of the table definition has.
-- $1 table id.
SELECT schema_id FROM tables WHERE id = $1;
