-- Whether a table has the location now (Locations.Live on a location its
-- view does not hold yet, such as a table created a moment ago).
-- $1 location (no trailing '/').
SELECT EXISTS (SELECT 1 FROM tables WHERE location = $1);
