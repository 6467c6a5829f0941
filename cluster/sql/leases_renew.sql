-- Renew the leases this node holds, in one statement (docs/design.md §3.2):
-- renewal extends expires_at and keeps the epoch. A lease whose epoch comes
-- back NULL was lost (taken over, released or expired): its job stops at
-- once. gone says its row no longer exists: its table was deleted (the
-- lease rows cascade), which is no fault.
-- $1 holder, $2 lease_ttl in microseconds, $3 scopes, $4 epochs.
-- One row per scope of $3: (scope, epoch renewed or NULL, gone).
WITH renewed AS (
    UPDATE leases AS l
    SET expires_at = now() + $2::bigint * interval '1 microsecond'
    FROM unnest($3::text[], $4::bigint[]) AS h(scope, epoch)
    WHERE l.scope = h.scope
      AND l.epoch = h.epoch
      AND l.holder = $1
      AND l.expires_at > now()
    RETURNING l.scope, l.epoch
)
-- CASE, whose order PostgreSQL guarantees: the look for the row costs
-- nothing for the leases renewed, every lease_ttl/3.
SELECT h.scope, r.epoch,
       CASE WHEN r.scope IS NULL
            THEN NOT EXISTS (SELECT 1 FROM leases x WHERE x.scope = h.scope)
            ELSE false END
FROM unnest($3::text[]) AS h(scope)
LEFT JOIN renewed r ON r.scope = h.scope;
