-- Creates principal $1 with client id $2, secret hash $3 (SHA-256) and
-- admin flag $4, and its grants $5 (text[]). No row when the name is
-- taken (revoked principals included).
-- $1 name, $2 client id, $3 secret hash, $4 admin, $5 grants.
WITH p AS (
    INSERT INTO principals (name, client_id, secret_hash, admin)
    VALUES ($1, $2, $3, $4)
    ON CONFLICT (name) DO NOTHING
    RETURNING name
), g AS (
    INSERT INTO principal_grants (principal, pattern)
    SELECT p.name, pattern FROM p, unnest($5::text[]) AS pattern
)
SELECT name FROM p;
