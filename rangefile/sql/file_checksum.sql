-- The recorded size and SHA-256 of a file a build must reproduce: the data
-- file of an indexed range, a tail file of a table load, or a tail file
-- built for a consumer-group tag (the same key holds the same bytes in all).
-- $1 key.
SELECT table_id, file_size, sha256 FROM data_files WHERE path = $1
UNION ALL
SELECT table_id, file_size, sha256 FROM tail_files WHERE path = $1
UNION ALL
SELECT table_id, file_size, sha256 FROM tag_files WHERE path = $1
LIMIT 1;
