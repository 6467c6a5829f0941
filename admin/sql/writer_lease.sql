-- The holding of the writer lease of some tables: no row for a table
-- whose lease is free or expired (by the database clock).
-- $1 table ids.
SELECT table_id, holder, epoch, expires_at
FROM leases
WHERE table_id = ANY($1) AND kind = 'writer' AND holder IS NOT NULL AND expires_at > now();
