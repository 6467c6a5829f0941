-- +goose Up

-- Consumer-group tags (docs/design.md §4.8). A tag's snapshot is not on
-- branch main: ref_name names the tag it was committed for (NULL for
-- main's snapshots).
ALTER TABLE snapshots ADD COLUMN ref_name text;

-- The data files a tagged snapshot lists: main's files below the group's
-- committed offsets, and the tail files built for the tag alone (the
-- range from the last such file to the committed offset). Collection never
-- deletes the row of a data file or tail file listed here, and a build on
-- a cache miss finds a tag's own tail files here (size and SHA-256 to
-- reproduce). The rows go with their snapshot's row, which collection
-- deletes once the tag moved on or went and the snapshot expired.
CREATE TABLE tag_files (
    table_id     bigint NOT NULL,
    snapshot_id  bigint NOT NULL,
    path         text NOT NULL, -- object key below the warehouse
    partition    int NOT NULL,
    start_offset bigint NOT NULL,
    end_offset   bigint NOT NULL,
    file_size    bigint NOT NULL,
    sha256       bytea NOT NULL,
    PRIMARY KEY (table_id, snapshot_id, path),
    FOREIGN KEY (table_id, snapshot_id) REFERENCES snapshots (table_id, snapshot_id) ON DELETE CASCADE
);
CREATE INDEX tag_files_path ON tag_files (path);

-- +goose Down
DROP TABLE tag_files;
ALTER TABLE snapshots DROP COLUMN ref_name;
