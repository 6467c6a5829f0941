-- Clear the re-indexing mark of data files whose rebuild matches their
-- recorded checksum again (the mismatch was transient).
-- $1 table id, $2 keys.
UPDATE data_files SET needs_rebuild = false WHERE table_id = $1 AND path = ANY($2);
