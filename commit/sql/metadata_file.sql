-- The content of a metadata file (metadata JSON, manifest list or
-- manifest) by its key below the warehouse.
-- $1 key.
SELECT content FROM metadata_files WHERE path = $1;
