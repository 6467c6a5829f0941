-- The principal named $1: client id, admin flag, grants and whether it is
-- revoked. No row when there is none.
-- $1 name.
SELECT p.client_id, p.admin,
       coalesce(array(SELECT pattern FROM principal_grants WHERE principal = p.name ORDER BY pattern), '{}'),
       p.revoked_at IS NOT NULL
FROM principals p
WHERE p.name = $1;
