-- The progress of each partition of some tables, by table id and
-- partition: how far its records are built into files, whoever built
-- them: the end of its last indexed range or the content end of the table
-- or its dead-letter table (a table load's tail files), whichever is
-- further (its start offset before either), its lease's holder and expiry (NULL when free or expired, by
-- the database clock) and epoch, and the records indexed per second over
-- the last minute (the records of the ranges created in the last minute /
-- 60: every node reads the same rows, so every node shows the same rate).
-- The committed offsets come from commit.CommittedOffsetsOf, in the same
-- transaction.
-- $1 table ids, $2 the ids of their dead-letter tables, pairwise.
SELECT p.table_id, p.partition,
       greatest((SELECT max(end_offset) FROM ranges g
                 WHERE g.table_id = p.table_id AND g.partition = p.partition),
                (SELECT max(c.end_offset) FROM content_ends c
                 WHERE c.table_id IN (t.id, t.dlq) AND c.partition = p.partition),
                p.start_offset),
       CASE WHEN l.expires_at > now() THEN l.holder END,
       CASE WHEN l.expires_at > now() THEN l.expires_at END,
       l.epoch,
       coalesce((SELECT sum(record_count) FROM ranges g
                 WHERE g.table_id = p.table_id AND g.partition = p.partition
                   AND g.created_at > now() - interval '1 minute'), 0) / 60.0
FROM unnest($1::bigint[], $2::bigint[]) AS t(id, dlq)
JOIN partitions p ON p.table_id = t.id
JOIN leases l ON l.table_id = p.table_id AND l.kind = 'partition' AND l.partition = p.partition
ORDER BY p.table_id, p.partition;
