-- The advertised URL of a live node (unexpired by the database clock), to
-- forward /admin/v1/nodes/{id}/… to it.
-- $1 node id.
SELECT advertise_url
FROM nodes
WHERE id = $1 AND expires_at > now();
