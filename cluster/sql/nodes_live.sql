-- The live members: rows that have not expired by the database clock.
SELECT id, advertise_url, roles, expires_at
FROM nodes
WHERE expires_at > now()
ORDER BY id;
