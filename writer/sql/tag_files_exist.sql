-- How many of some keys still have a data file or tail file row (a file
-- a tagged snapshot is about to list must be buildable: collection may
-- have deleted a removed one since it was read).
-- $1 table id, $2 keys.
SELECT (SELECT count(*) FROM data_files WHERE table_id = $1 AND path = ANY($2))
     + (SELECT count(*) FROM tail_files WHERE table_id = $1 AND path = ANY($2));
