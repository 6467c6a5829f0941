-- The namespaces one level below $1 (levels joined by '.'; '' for the top
-- level), as their last level, in byte order, after $2 ('' from the start),
-- at most $3 of them (NULL for all).
SELECT child FROM (
    SELECT DISTINCT split_part(
        CASE WHEN $1 = '' THEN namespace ELSE substr(namespace, length($1) + 2) END,
        '.', 1) COLLATE "C" AS child
    FROM tables
    WHERE $1 = '' OR starts_with(namespace, $1 || '.')
) children
WHERE child > $2
ORDER BY child
LIMIT $3
