-- Revokes principal $1 (at the database's time); a revoked one keeps its
-- first revocation time. Returns the revocation time, no row when there
-- is no such principal.
-- $1 name.
UPDATE principals SET revoked_at = coalesce(revoked_at, now())
WHERE name = $1
RETURNING revoked_at;
