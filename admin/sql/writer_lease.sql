-- The holding of a table's writer lease: no row when it is free or
-- expired (by the database clock).
-- $1 table id.
SELECT holder, epoch, expires_at
FROM leases
WHERE table_id = $1 AND kind = 'writer' AND holder IS NOT NULL AND expires_at > now();
