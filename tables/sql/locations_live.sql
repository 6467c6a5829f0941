-- Every live table location (dead-letter tables included), for a node's
-- view of which keys may be served (Locations).
SELECT location FROM tables;
