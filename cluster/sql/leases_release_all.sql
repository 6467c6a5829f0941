-- Release every lease held under this node id: at a clean stop, and at
-- registration for the holdings of a previous process with the same id
-- (it crashed; its jobs cannot be trusted to this process).
-- $1 holder.
UPDATE leases
SET holder = NULL, expires_at = NULL
WHERE holder = $1
RETURNING scope, epoch;
