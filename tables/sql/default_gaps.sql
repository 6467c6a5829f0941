-- The default gaps of some tables (docs/design.md §4.7, "Alter and
-- repair"): per table, its schema versions older than its newest that
-- lack a column (a field id, at any depth) to which the newest version's
-- fields give a non-null Avro default, and how many live committed data
-- files of the table were encoded with one of them (their rows read null
-- there). One row per table that has such versions.
-- $1 table ids.
WITH newest AS (
    SELECT DISTINCT ON (table_id) table_id, schema_id, fields
    FROM table_schemas
    WHERE table_id = ANY($1)
    ORDER BY table_id, schema_id DESC
), defaulted AS (
    SELECT n.table_id, f.key::int AS field_id
    -- fields is json (a default may hold U+0000, which jsonb refuses): the
    -- escape is replaced only to ask which defaults are not null.
    FROM newest n, jsonb_each(replace(n.fields::text, '\u0000', '\u0001')::jsonb) f
    WHERE f.value ? 'default' AND f.value->'default' <> 'null'::jsonb
), gaps AS (
    SELECT s.table_id, array_agg(s.schema_id ORDER BY s.schema_id) AS versions
    FROM table_schemas s
    JOIN newest n ON n.table_id = s.table_id AND s.schema_id < n.schema_id
    WHERE EXISTS (SELECT 1 FROM defaulted d
                  WHERE d.table_id = s.table_id
                    AND NOT jsonb_path_exists(s.schema_json, 'lax $.**.id ? (@ == $id)',
                                              jsonb_build_object('id', d.field_id)))
    GROUP BY s.table_id
)
SELECT g.table_id, g.versions,
       (SELECT count(*) FROM data_files f
        WHERE f.table_id = g.table_id AND f.committed_snapshot_id IS NOT NULL
          AND f.removed_snapshot_id IS NULL AND f.schema_id = ANY(g.versions))
FROM gaps g;
