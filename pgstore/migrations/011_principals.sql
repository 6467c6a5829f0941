-- +goose Up

-- Principals (docs/design.md §5, security): the callers of the catalog,
-- the admin API and the S3 API, made by `mink principal create`. A
-- principal authenticates with its client id and secret (OAuth2 client
-- credentials) for a bearer token. The secret is kept as its SHA-256
-- only: it is 32 random bytes, so a hash without salt or stretching
-- cannot be reversed. A revoked principal keeps its row (its name is not
-- reused: credentials vended to it must not become another's).
CREATE TABLE principals (
    name        text PRIMARY KEY,
    client_id   text NOT NULL UNIQUE,
    secret_hash bytea NOT NULL CHECK (length(secret_hash) = 32),
    admin       boolean NOT NULL DEFAULT false,
    created_at  timestamptz NOT NULL DEFAULT now(),
    revoked_at  timestamptz
);

-- The tables a principal may read: "NS.*", "NS.TABLE" or "*"
-- (auth.Principal.Allows).
CREATE TABLE principal_grants (
    principal text NOT NULL REFERENCES principals (name) ON DELETE CASCADE,
    pattern   text NOT NULL,
    PRIMARY KEY (principal, pattern)
);

-- +goose Down
DROP TABLE principal_grants;
DROP TABLE principals;
