-- Orders table creates for the location check (location_overlap.sql):
-- a transaction-scoped advisory lock, taken in its own statement so that
-- the check's snapshot sees every create committed before it.
-- $1 the lock key (tables.locationLock).
SELECT pg_advisory_xact_lock($1);
