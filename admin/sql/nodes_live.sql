-- The live nodes (unexpired by the database clock), by id, each with the
-- scopes of the unexpired leases it holds, by scope.
SELECT n.id, n.advertise_url, n.roles, n.expires_at,
       coalesce(array_agg(l.scope ORDER BY l.scope) FILTER (WHERE l.scope IS NOT NULL), '{}')
FROM nodes n
LEFT JOIN leases l ON l.holder = n.id AND l.expires_at > now()
WHERE n.expires_at > now()
GROUP BY n.id
ORDER BY n.id;
