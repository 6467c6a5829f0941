-- A tail data file committed by a snapshot (docs/design.md §4.4): built from Kafka
-- past a table's content end by a table load, or by the writer to bridge
-- tail files and indexed data files. The same key names the same bytes, so
-- a row removed earlier may come back: it then keeps its first committing
-- sequence number (the snapshots that list the file lie in
-- [committed, removed) of sequence numbers, for collection; a gap between
-- its two lives only keeps the row longer).
-- $1 key, $2 table id, $3 partition, $4 start offset, $5 end offset,
-- $6 encoder version, $7 size, $8 sha256, $9 record count, $10 stats,
-- $11 committing snapshot id, $12 column sketches (datafile.Sketches).
INSERT INTO tail_files (path, table_id, partition, start_offset, end_offset, encoder_version,
                        file_size, sha256, record_count, stats, committed_snapshot_id, sketches,
                        committed_sequence_number)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, (SELECT s.sequence_number FROM snapshots s WHERE s.table_id = $2 AND s.snapshot_id = $11))
ON CONFLICT (path) DO UPDATE
SET committed_snapshot_id = excluded.committed_snapshot_id, removed_snapshot_id = NULL,
    committed_sequence_number = least(tail_files.committed_sequence_number, excluded.committed_sequence_number),
    removed_sequence_number = NULL, sketches = excluded.sketches;
