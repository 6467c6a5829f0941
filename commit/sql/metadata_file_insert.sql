-- Store a metadata file of a commit.
-- $1 key, $2 table id, $3 content.
INSERT INTO metadata_files (path, table_id, content) VALUES ($1, $2, $3);
