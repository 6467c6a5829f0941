-- +goose Up

-- More news that calls for a round at once (cluster/doc.go, "When rounds
-- run"; migration 007):
--   - a node registers (a new row, or a row taken over by a new process
--     after the old one expired): the others' shares drop and they hand
--     leases back now rather than at their next interval;
--   - a lease is released (holder set to NULL, rule 3 or 4 of the sharing
--     rules): the node that should take it does so now, so the lease is not
--     left unheld for up to lease_ttl/3 while nodes join or the writer
--     lease moves to the node that prefers it.
CREATE TRIGGER nodes_notify_join AFTER INSERT ON nodes
    FOR EACH ROW EXECUTE FUNCTION mink_notify_round();
CREATE TRIGGER nodes_notify_rejoin AFTER UPDATE OF instance ON nodes
    FOR EACH ROW WHEN (OLD.instance IS DISTINCT FROM NEW.instance) EXECUTE FUNCTION mink_notify_round();
CREATE TRIGGER leases_notify_release AFTER UPDATE OF holder ON leases
    FOR EACH ROW WHEN (OLD.holder IS NOT NULL AND NEW.holder IS NULL) EXECUTE FUNCTION mink_notify_round();

-- +goose Down
DROP TRIGGER leases_notify_release ON leases;
DROP TRIGGER nodes_notify_rejoin ON nodes;
DROP TRIGGER nodes_notify_join ON nodes;
