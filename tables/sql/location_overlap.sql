-- A table whose location lies below $1 or above it (docs/design.md §4.1):
-- keys are paths, so a table's location must not be a path prefix of
-- another's, or credentials for one table's prefix would cover the
-- other's files (§5). Run after pg_advisory_xact_lock so that two creates
-- cannot both pass it.
-- $1 location of the table to create (no trailing '/').
SELECT namespace || '.' || name, location
FROM tables
WHERE starts_with(location, $1 || '/') OR starts_with($1, location || '/')
LIMIT 1;
