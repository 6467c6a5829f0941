-- The column sketches of a table's live files: the committed data files
-- and tail files no snapshot removed, i.e. those of its current snapshot
-- in the caller's database snapshot. sketches is NULL for a file recorded
-- before sketches were kept.
-- $1 table id.
SELECT sketches FROM data_files
WHERE table_id = $1 AND committed_snapshot_id IS NOT NULL AND removed_snapshot_id IS NULL
UNION ALL
SELECT sketches FROM tail_files
WHERE table_id = $1 AND removed_snapshot_id IS NULL;
