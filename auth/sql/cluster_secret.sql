-- The cluster's secret, stored by the first caller: $1 (32 random bytes) is
-- inserted when there is none, and the stored secret is returned. A caller
-- that loses a race with another first caller gets no row (the winner's
-- insert is not in this statement's snapshot) and runs it again.
-- $1 secret.
WITH ins AS (
    INSERT INTO cluster_secret (id, secret) VALUES (1, $1)
    ON CONFLICT (id) DO NOTHING
    RETURNING secret
)
SELECT secret FROM ins
UNION ALL
SELECT secret FROM cluster_secret WHERE id = 1
LIMIT 1;
