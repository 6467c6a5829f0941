-- Lock a table's row as commits do (FOR NO KEY UPDATE: see
-- commit/sql/head_lock.sql), so that schema versions are added one at a
-- time, and read its newest schema.
-- $1 table id.
SELECT schema_json FROM tables WHERE id = $1 FOR NO KEY UPDATE;
