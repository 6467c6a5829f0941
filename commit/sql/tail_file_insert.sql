-- A tail data file committed by a snapshot (docs/design.md §4.4): built from Kafka
-- past a table's content end by a table load, or by the writer to bridge
-- tail files and indexed data files. The same key names the same bytes, so
-- a row removed earlier may come back.
-- $1 key, $2 table id, $3 partition, $4 start offset, $5 end offset,
-- $6 encoder version, $7 size, $8 sha256, $9 record count, $10 stats,
-- $11 committing snapshot id, $12 column sketches (datafile.Sketches).
INSERT INTO tail_files (path, table_id, partition, start_offset, end_offset, encoder_version,
                        file_size, sha256, record_count, stats, committed_snapshot_id, sketches)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
ON CONFLICT (path) DO UPDATE
SET committed_snapshot_id = excluded.committed_snapshot_id, removed_snapshot_id = NULL,
    sketches = excluded.sketches;
