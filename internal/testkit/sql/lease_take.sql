-- Give a lease to a holder as the cluster loop's take does (the epoch is
-- incremented in the same UPDATE that sets the holder), whoever holds it:
-- a test takes a lease for a job it runs itself, or steals one from a
-- node. cluster/sql/lease_take.sql is the node's own, which takes only a
-- free lease.
-- $1 scope, $2 holder, $3 time to live in microseconds.
UPDATE leases
SET holder = $2,
    epoch = epoch + 1,
    expires_at = now() + $3::bigint * interval '1 microsecond'
WHERE scope = $1
RETURNING scope, table_id, kind, coalesce(partition, 0), holder, epoch;
