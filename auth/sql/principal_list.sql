-- Every principal, by name, with its grants (sorted) and times.
-- No parameters.
SELECT p.name, p.client_id, p.admin,
       coalesce(array_agg(g.pattern ORDER BY g.pattern) FILTER (WHERE g.pattern IS NOT NULL), '{}') AS grants,
       p.created_at, p.revoked_at
FROM principals p
LEFT JOIN principal_grants g ON g.principal = p.name
GROUP BY p.name
ORDER BY p.name COLLATE "C";
