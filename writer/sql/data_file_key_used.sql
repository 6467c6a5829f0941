-- Whether a data file, tail file or tag file row with this key exists (live, removed
-- or not collected yet): a new file of other bytes must not take a key a
-- node may still have cached, so it takes the range's next generation.
-- $1 key.
SELECT EXISTS (SELECT 1 FROM data_files WHERE path = $1) OR EXISTS (SELECT 1 FROM tail_files WHERE path = $1)
    OR EXISTS (SELECT 1 FROM tag_files WHERE path = $1);
