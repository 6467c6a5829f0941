-- The data files a tagged snapshot lists (docs/design.md §4.8): kept from
-- collection, and buildable on a cache miss (size and SHA-256).
-- $1 table id, $2 snapshot id, $3 keys, $4 partitions, $5 start offsets,
-- $6 end offsets, $7 sizes, $8 SHA-256s.
INSERT INTO tag_files (table_id, snapshot_id, path, partition, start_offset, end_offset, file_size, sha256)
SELECT $1, $2, f.path, f.partition, f.start_offset, f.end_offset, f.file_size, f.sha256
FROM unnest($3::text[], $4::int[], $5::bigint[], $6::bigint[], $7::bigint[], $8::bytea[])
     AS f(path, partition, start_offset, end_offset, file_size, sha256);
