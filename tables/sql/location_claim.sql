-- Claims a table location (docs/design.md §4.1): one row when $1 was never
-- given out, none when a table, live or deleted, had it. Run under the
-- location lock (location_lock.sql).
-- $1 location (no trailing '/').
INSERT INTO table_locations (location) VALUES ($1) ON CONFLICT DO NOTHING;
