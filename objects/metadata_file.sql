-- The content of one metadata file (metadata JSON, manifest list or
-- manifest) by its object key below the warehouse.
SELECT content, created_at FROM metadata_files WHERE path = $1
