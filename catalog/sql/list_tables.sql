-- The names of the tables in namespace $1 (levels joined by '.'), in byte
-- order, after $2 ('' from the start), at most $3 of them (NULL for all).
SELECT name COLLATE "C" AS name
FROM tables
WHERE namespace = $1 AND name COLLATE "C" > $2
ORDER BY 1
LIMIT $3
