-- The recorded size and SHA-256 of a file a build must reproduce: the data
-- file of an indexed range, or a tail file of a table load (the same key
-- holds the same bytes in both).
-- $1 key.
SELECT table_id, file_size, sha256 FROM data_files WHERE path = $1
UNION ALL
SELECT table_id, file_size, sha256 FROM tail_files WHERE path = $1
LIMIT 1;
