-- Whether namespace $1 (levels joined by '.') exists: a namespace exists
-- while a table lives in it or in a namespace below it.
SELECT EXISTS (
    SELECT 1 FROM tables
    WHERE namespace = $1 OR starts_with(namespace, $1 || '.')
)
