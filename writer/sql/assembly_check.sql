-- Checks, under both row locks, that a planned assembly group is as
-- planned (docs/design.md §4.6, "assembly"): how many of its files are
-- still live and committed, and how many other live data files or tail
-- files of the table or its dead-letter table overlap its range (a repair
-- or a load committed there since the plan).
-- $1 table id, $2 dead-letter table id, $3 partition, $4 start offset,
-- $5 end offset, $6 keys of the group's files.
SELECT (SELECT count(*) FROM data_files
        WHERE path = ANY($6) AND table_id IN ($1, $2) AND removed_snapshot_id IS NULL AND committed_snapshot_id IS NOT NULL),
       (SELECT count(*) FROM data_files
        WHERE table_id IN ($1, $2) AND partition = $3 AND removed_snapshot_id IS NULL
          AND start_offset < $5 AND end_offset > $4 AND path <> ALL($6))
     + (SELECT count(*) FROM tail_files
        WHERE table_id IN ($1, $2) AND partition = $3 AND removed_snapshot_id IS NULL
          AND start_offset < $5 AND end_offset > $4);
