-- Clean stop (design §3.1): others see the node gone at once.
-- $1 id.
DELETE FROM nodes WHERE id = $1;
