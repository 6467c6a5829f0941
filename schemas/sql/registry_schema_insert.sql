-- Keep a registry schema by id; the registry never changes the schema of
-- an id, so a second insert of one id changes nothing.
-- $1 registry id, $2 wire.Schema's JSON.
INSERT INTO registry_schemas (id, schema) VALUES ($1, $2)
ON CONFLICT (id) DO NOTHING;
