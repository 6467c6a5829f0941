-- The fencing check of a writer transaction that inserts no snapshot
-- (collection): locks the writer lease FOR SHARE until the transaction ends.
-- $1 scope, $2 holder, $3 epoch.
SELECT mink_check_epoch($1, $2, $3);
