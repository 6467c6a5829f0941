-- Replace the properties of a table (a change through the admin API,
-- docs/design.md §5); the caller holds the table's row lock.
-- $1 table id, $2 properties JSON.
UPDATE tables SET properties = $2 WHERE id = $1;
