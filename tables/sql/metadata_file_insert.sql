-- Store a metadata file: a new table's first metadata JSON, or one of a
-- commit's files. Never changed once written.
-- $1 key below the warehouse, $2 table id, $3 content.
INSERT INTO metadata_files (path, table_id, content)
VALUES ($1, $2, $3);
