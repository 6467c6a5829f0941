-- Every lease, with free judged by the database clock (docs/design.md §3.2: free
-- when holder is null or expires_at < now()). Rounds keep a view of this
-- (leases_changes.sql, view.go); the tests check the view against it.
SELECT scope, table_id, kind, coalesce(partition, 0), coalesce(holder, ''), epoch,
       (holder IS NULL OR expires_at IS NULL OR expires_at < now()) AS free
FROM leases
ORDER BY scope;
