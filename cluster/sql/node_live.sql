-- Whether a node is a live member now (its row unexpired by the database
-- clock): a forwarded request's sender must be one.
-- $1 node id.
SELECT EXISTS (SELECT 1 FROM nodes WHERE id = $1 AND expires_at > now());
