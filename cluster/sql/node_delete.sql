-- Clean stop (docs/design.md §3.1): others see the node gone at once. Only the
-- process that registered the row deletes it.
-- $1 id, $2 instance.
DELETE FROM nodes WHERE id = $1 AND instance = $2;
