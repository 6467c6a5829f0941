-- Add a range's unknown JSON fields to its partition's count, in the
-- transaction that inserts the range (so they are counted once), and keep
-- the first $5 distinct example paths, earliest first.
-- $1 table id, $2 partition, $3 unknown field count, $4 example paths,
-- $5 most examples kept.
INSERT INTO unknown_fields AS u (table_id, partition, field_count, examples)
VALUES ($1, $2, $3, $4)
ON CONFLICT (table_id, partition) DO UPDATE SET
    field_count = u.field_count + excluded.field_count,
    examples = CASE WHEN cardinality(u.examples) >= $5::int THEN u.examples ELSE ARRAY(
        SELECT e FROM unnest(u.examples || excluded.examples) WITH ORDINALITY AS x(e, n)
        GROUP BY e ORDER BY min(n) LIMIT $5::int) END;
