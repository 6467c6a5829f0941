-- Take one free lease (docs/design.md §3.2): the epoch is incremented in the same
-- UPDATE that sets the holder. No row comes back when the lease is not
-- free. The update waits while a holder's fenced transaction has the row
-- FOR SHARE (mink_check_epoch), so a take never overlaps a write that the
-- previous holding made.
-- $1 scope, $2 holder, $3 lease_ttl in microseconds.
UPDATE leases
SET holder = $2,
    epoch = epoch + 1,
    expires_at = now() + $3::bigint * interval '1 microsecond'
WHERE scope = $1
  AND (holder IS NULL OR expires_at IS NULL OR expires_at < now())
RETURNING table_id, kind, coalesce(partition, 0), epoch;
