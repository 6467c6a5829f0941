-- Release one lease this node holds at this epoch. A holding that changed
-- hands meanwhile is left alone.
-- $1 scope, $2 holder, $3 epoch.
UPDATE leases
SET holder = NULL, expires_at = NULL
WHERE scope = $1 AND holder = $2 AND epoch = $3;
