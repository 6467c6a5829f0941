-- What a node's writers need to know of their tables each commit interval,
-- read once for all of them (docs/design.md §4.6, idle rounds). Per table:
-- pending, whether a commit round has work (an indexed data file of the
-- table or of its dead-letter table not committed yet, or a partition
-- indexed past the content end of either, a partition no commit of a
-- table reached yet ending at its start offset, as in
-- commit/sql/committed_offsets.sql); rebuild, whether a live data
-- file of either is marked for re-indexing; the metadata locations of both
-- (every commit changes one) and their current snapshots (a commit of
-- statistics changes the location, not the snapshot); the topic; and how
-- many partitions the table has leases for; and tags, whether the
-- consumer-group tag duty has anything to look at (the table has
-- mink.group-tags, or tagged snapshots left to remove; docs/design.md
-- §4.8). A table that is gone has no row.
-- $1 ids of tables (not dead-letter tables).
SELECT t.id,
  EXISTS (SELECT 1 FROM data_files f
          WHERE f.table_id IN (t.id, d.id) AND f.committed_snapshot_id IS NULL AND f.removed_snapshot_id IS NULL)
  OR EXISTS (SELECT 1 FROM partitions p
             CROSS JOIN (VALUES (t.id), (d.id)) g(id)
             LEFT JOIN content_ends c ON c.table_id = g.id AND c.partition = p.partition
             CROSS JOIN LATERAL (SELECT r.end_offset FROM ranges r
                                 WHERE r.table_id = t.id AND r.partition = p.partition
                                 ORDER BY r.start_offset DESC LIMIT 1) l
             WHERE p.table_id = t.id AND g.id IS NOT NULL
               AND l.end_offset > coalesce(c.end_offset, p.start_offset)),
  EXISTS (SELECT 1 FROM data_files f
          WHERE f.table_id IN (t.id, d.id) AND f.needs_rebuild AND f.removed_snapshot_id IS NULL),
  t.metadata_location || ' ' || coalesce(d.metadata_location, ''),
  coalesce(t.current_snapshot_id::text, '') || ' ' || coalesce(d.current_snapshot_id::text, ''),
  t.topic,
  (SELECT count(*) FROM partitions p WHERE p.table_id = t.id)::int,
  t.properties ? 'mink.group-tags'
  OR EXISTS (SELECT 1 FROM snapshots s WHERE s.table_id = t.id AND s.ref_name IS NOT NULL AND s.expired_at IS NULL)
FROM tables t LEFT JOIN tables d ON d.dlq_of = t.id
WHERE t.id = ANY($1);
