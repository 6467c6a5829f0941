-- The live files of a table (the committed data files and tail files no
-- snapshot removed: those of its current snapshot in the caller's database
-- snapshot) and their column sketches, except for the files the caller
-- merged already. missing is true for a file recorded before sketches were
-- kept.
-- $1 table id, $2 keys whose sketches the caller does not need.
SELECT path, CASE WHEN path = ANY($2) THEN NULL ELSE sketches END, sketches IS NULL AS missing
FROM data_files
WHERE table_id = $1 AND committed_snapshot_id IS NOT NULL AND removed_snapshot_id IS NULL
UNION ALL
SELECT path, CASE WHEN path = ANY($2) THEN NULL ELSE sketches END, sketches IS NULL AS missing
FROM tail_files
WHERE table_id = $1 AND removed_snapshot_id IS NULL;
