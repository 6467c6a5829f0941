-- Whether a table's snapshots after sequence number $2 up to $3 may have
-- removed rows from main (a delete or an overwrite of main; an append adds
-- rows and a replace keeps them; a tagged snapshot, off main, takes a
-- sequence number but changes nothing main holds, whatever its operation
-- against its parent), or cannot tell because some of their rows are gone.
-- $1 table id, $2 sequence number merged before, $3 current one.
SELECT count(*) FILTER (WHERE ref_name IS NULL AND operation IN ('delete', 'overwrite')) > 0
       OR count(*) <> $3::bigint - $2::bigint
FROM snapshots
WHERE table_id = $1 AND sequence_number > $2::bigint AND sequence_number <= $3::bigint;
