-- The generation of a rebuilt file of a range: one past the range's last.
-- Keys name the encoder version, so a re-encoded file of the same range
-- starts again at generation 0.
-- $1 table id, $2 partition, $3 start offset, $4 encoder version.
SELECT coalesce(max(generation) + 1, 0) FROM data_files
WHERE table_id = $1 AND partition = $2 AND start_offset = $3 AND encoder_version = $4;
