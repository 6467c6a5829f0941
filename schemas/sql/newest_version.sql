-- A table's newest schema version.
-- $1 table id.
SELECT schema_id FROM tables WHERE id = $1;
