-- A metadata file (metadata JSON, manifest list or manifest) by its key
-- below the warehouse: its content and when it was stored (the S3 API's
-- Last-Modified). Every reader of metadata files by key runs this one.
-- $1 key.
SELECT content, created_at
FROM metadata_files
WHERE path = $1;
