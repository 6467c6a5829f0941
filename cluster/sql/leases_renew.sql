-- Renew the leases this node holds, in one statement (docs/design.md §3.2):
-- renewal extends expires_at and keeps the epoch. A lease that is missing
-- from the result was lost (taken over, released or expired): its job stops
-- at once.
-- $1 holder, $2 lease_ttl in microseconds, $3 scopes, $4 epochs.
UPDATE leases AS l
SET expires_at = now() + $2::bigint * interval '1 microsecond'
FROM unnest($3::text[], $4::bigint[]) AS h(scope, epoch)
WHERE l.scope = h.scope
  AND l.epoch = h.epoch
  AND l.holder = $1
  AND l.expires_at > now()
RETURNING l.scope, l.epoch;
