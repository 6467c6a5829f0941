-- The principal of client id $1: name, secret hash, admin flag, grants
-- and whether it is revoked. No row when there is none.
-- $1 client id.
SELECT p.name, p.secret_hash, p.admin,
       coalesce(array(SELECT pattern FROM principal_grants WHERE principal = p.name ORDER BY pattern), '{}'),
       p.revoked_at IS NOT NULL
FROM principals p
WHERE p.client_id = $1;
