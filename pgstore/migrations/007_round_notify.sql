-- +goose Up

-- Rounds on notice (cluster/doc.go, "When rounds run"). Nodes run a sharing
-- round every lease_ttl/3; a change that calls for one sooner is announced
-- at its commit with NOTIFY, and every node LISTENing runs a round at once:
--   - lease rows inserted or deleted: a table created (its partition and
--     writer leases), dropped (cascaded), or grown (new partitions);
--   - a node row deleted: a clean stop, whose leases are free now.
-- The channel is mink_cluster_<oid of the schema holding these tables>, so
-- that clusters in different schemas of one database do not wake each
-- other; PostgreSQL sends one notification per transaction for identical
-- channel and payload, however many rows changed.
-- +goose StatementBegin
CREATE FUNCTION mink_notify_round() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('mink_cluster_' || (SELECT c.relnamespace FROM pg_class c WHERE c.oid = TG_RELID)::text,
                      TG_TABLE_NAME || ' ' || lower(TG_OP));
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER leases_notify_round AFTER INSERT OR DELETE ON leases
    FOR EACH ROW EXECUTE FUNCTION mink_notify_round();
CREATE TRIGGER nodes_notify_round AFTER DELETE ON nodes
    FOR EACH ROW EXECUTE FUNCTION mink_notify_round();

-- +goose Down
DROP TRIGGER nodes_notify_round ON nodes;
DROP TRIGGER leases_notify_round ON leases;
DROP FUNCTION mink_notify_round();
