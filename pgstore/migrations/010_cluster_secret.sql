-- +goose Up

-- The cluster's secret (docs/design.md §5, security): 32 random bytes made
-- by the first node that needs them. Keys derived from it (auth.DeriveKey)
-- sign what nodes forward to each other, the catalog's bearer tokens and
-- vended S3 credentials, so any node can check what another made. Only the
-- nodes (whoever can read this database) know it.
CREATE TABLE cluster_secret (
    id         int PRIMARY KEY CHECK (id = 1),
    secret     bytea NOT NULL CHECK (length(secret) = 32),
    created_at timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE cluster_secret;
