-- The namespace (levels joined by '.') and name of every table of
-- namespace $1 and of the namespaces below it; of every table when $1 is
-- ''. The catalog filters them by a principal's grants.
-- $1 namespace.
SELECT namespace, name
FROM tables
WHERE $1 = '' OR namespace = $1 OR starts_with(namespace, $1 || '.')
