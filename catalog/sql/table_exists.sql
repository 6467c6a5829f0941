-- Whether table $2 of namespace $1 (levels joined by '.') exists.
SELECT EXISTS (SELECT 1 FROM tables WHERE namespace = $1 AND name = $2)
