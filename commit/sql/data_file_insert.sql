-- Record the data file of an indexed range (the indexer, in the range's
-- fenced transaction; not committed yet), or a file the writer's expiry
-- or assembly rebuilt (committed by that snapshot, with the generation
-- its key needs).
-- $1 table id, $2 partition, $3 start offset, $4 end offset, $5 encoder
-- version, $6 schema id, $7 key, $8 size, $9 sha256, $10 record count,
-- $11 stats, $12 min timestamp, $13 max timestamp, $14 committing snapshot
-- id (NULL: not committed yet), $15 generation, $16 column sketches
-- (datafile.Sketches). The committing snapshot's sequence number comes from
-- its row, stored earlier in the same transaction.
INSERT INTO data_files (table_id, partition, start_offset, end_offset, encoder_version, schema_id, path,
                        file_size, sha256, record_count, stats, min_timestamp, max_timestamp,
                        committed_snapshot_id, generation, sketches, committed_sequence_number)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16,
        (SELECT s.sequence_number FROM snapshots s WHERE s.table_id = $1 AND s.snapshot_id = $14));
