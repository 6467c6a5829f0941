-- The channel on which this cluster's rounds are announced (migration
-- 005): mink_cluster_<oid of the schema holding the leases table>.
SELECT 'mink_cluster_' || c.relnamespace::text FROM pg_class c WHERE c.oid = 'leases'::regclass;
