-- A registry schema Mink has used, by id (wire.Schema's JSON).
-- $1 registry id.
SELECT schema FROM registry_schemas WHERE id = $1;
