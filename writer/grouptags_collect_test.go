package writer_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/tables"
	"github.com/minkhq/mink/writer"
)

// TestCollectKeepsTagFiles: collection deletes the rows of removed data
// files and tail files that no remaining snapshot lists, except those a
// tagged snapshot lists (tag_files): a tag's reader can still have them
// built (docs/design.md §4.8). A manifest of main's that a tag's snapshot
// carries over (its row lists it) stays when main's snapshot goes; one
// only the collected snapshot listed goes with its manifest list.
func TestCollectKeepsTagFiles(t *testing.T) {
	ctx := context.Background()
	f := testkit.NewFixture(t, 1, tables.Definition{Namespace: "t", Name: "k", Topic: "k", ValueFormat: "raw"})
	pool, tbl := f.Pool, f.Table
	exec := func(q string, args ...any) {
		t.Helper()
		_, err := pool.Exec(ctx, q, args...)
		require.NoError(t, err)
	}
	// An expired snapshot to collect (collection deletes files only in a
	// pass that collects snapshots), and the tag's live one.
	exec(`INSERT INTO snapshots (table_id, snapshot_id, sequence_number, operation, manifest_list, metadata_location, manifests, expired_at)
	      VALUES ($1, 1, 1, 'append', 's3://mink/t/k/metadata/l1.avro', 'm', '{t/k/metadata/a-m0.avro,t/k/metadata/b-m0.avro}',
	              now() - interval '1 hour')`, tbl.ID)
	exec(`INSERT INTO snapshots (table_id, snapshot_id, sequence_number, operation, manifest_list, metadata_location, manifests, ref_name)
	      VALUES ($1, 7, 7, 'delete', 's3://mink/t/k/metadata/l7.avro', 'm', '{t/k/metadata/a-m0.avro,t/k/metadata/c-t0-m1.avro}',
	              'group.billing')`, tbl.ID)
	for _, key := range []string{"t/k/metadata/l1.avro", "t/k/metadata/a-m0.avro", "t/k/metadata/b-m0.avro", "t/k/metadata/l7.avro", "t/k/metadata/c-t0-m1.avro"} {
		exec(`INSERT INTO metadata_files (path, table_id, content) VALUES ($1, $2, '\x00')`, key, tbl.ID)
	}
	// Files removed by a snapshot 9 that is gone: nothing protects them
	// but tag_files.
	for i, key := range []string{"t/k/data/0/0-10-2.parquet", "t/k/data/0/10-20-2.parquet"} {
		exec(`INSERT INTO data_files (table_id, partition, start_offset, end_offset, encoder_version, schema_id, path, file_size,
		      sha256, record_count, stats, committed_snapshot_id, removed_snapshot_id, committed_sequence_number, removed_sequence_number)
		      VALUES ($1, 0, $2, $3, 2, 0, $4, 1, '\x00', 10, '{}', 1, 9, 1, 9)`, tbl.ID, i*10, i*10+10, key)
	}
	for i, key := range []string{"t/k/data/0/20-25-2.parquet", "t/k/data/0/25-30-2.parquet"} {
		exec(`INSERT INTO tail_files (path, table_id, partition, start_offset, end_offset, encoder_version, file_size, sha256,
		      record_count, stats, committed_snapshot_id, removed_snapshot_id, committed_sequence_number, removed_sequence_number)
		      VALUES ($1, $2, 0, $3, $4, 2, 1, '\x00', 5, '{}', 1, 9, 1, 9)`, key, tbl.ID, 20+i*5, 25+i*5)
	}
	exec(`INSERT INTO tag_files (table_id, snapshot_id, path, partition, start_offset, end_offset, file_size, sha256)
	      VALUES ($1, 7, 't/k/data/0/0-10-2.parquet', 0, 0, 10, 1, '\x00'), ($1, 7, 't/k/data/0/20-25-2.parquet', 0, 20, 25, 1, '\x00')`, tbl.ID)

	// A writer's first round runs every duty, collection included.
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	w := writer.New(pool, f.Client, writer.Config{CommitInterval: 50 * time.Millisecond})
	go func() { done <- w.Run(runCtx, f.Take(t, tables.WriterScope(tbl.ID), "n")) }()
	require.Eventually(t, func() bool {
		var n int
		require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM snapshots WHERE table_id = $1 AND snapshot_id = 1`, tbl.ID).Scan(&n))
		return n == 0
	}, 10*time.Second, 20*time.Millisecond, "the expired snapshot is collected")
	stop()
	require.NoError(t, <-done)
	paths := func(q string) (out []string) {
		rows, err := pool.Query(ctx, q, tbl.ID)
		require.NoError(t, err)
		for rows.Next() {
			var p string
			require.NoError(t, rows.Scan(&p))
			out = append(out, p)
		}
		require.NoError(t, rows.Err())
		return out
	}
	require.Equal(t, []string{"t/k/data/0/0-10-2.parquet"}, paths(`SELECT path FROM data_files WHERE table_id = $1 ORDER BY path`))
	require.Equal(t, []string{"t/k/data/0/20-25-2.parquet"}, paths(`SELECT path FROM tail_files WHERE table_id = $1 ORDER BY path`))
	require.Equal(t, []string{"t/k/metadata/a-m0.avro", "t/k/metadata/c-t0-m1.avro", "t/k/metadata/l7.avro"},
		paths(`SELECT path FROM metadata_files WHERE table_id = $1 AND path LIKE '%.avro' ORDER BY path`),
		"main's manifest the tag carries over stays; b-m0 and l1 go")
}

// TestTagSnapshotsRemoveNoRowsOfMain: a tagged snapshot's operation is
// its change against its parent (a delete when it cuts main's content),
// but it is off main: the statistics duty's incremental merge does not
// take it for rows removed from main; a delete of main still counts.
func TestTagSnapshotsRemoveNoRowsOfMain(t *testing.T) {
	ctx := context.Background()
	f := testkit.NewFixture(t, 1, tables.Definition{Namespace: "t", Name: "r", Topic: "r", ValueFormat: "raw"})
	pool, tbl := f.Pool, f.Table
	for _, s := range []struct {
		seq int64
		op  string
		ref any
	}{{1, "append", nil}, {2, "delete", "group.a"}, {3, "overwrite", "group.b"}, {4, "append", nil}, {5, "delete", nil}} {
		_, err := pool.Exec(ctx, `INSERT INTO snapshots (table_id, snapshot_id, sequence_number, operation, manifest_list, metadata_location, manifests, ref_name)
		      VALUES ($1, $2, $2, $3, 's3://mink/t/r/metadata/l.avro', 'm', '{}', $4)`, tbl.ID, s.seq, s.op, s.ref)
		require.NoError(t, err)
	}
	removed, err := writer.RowsRemovedSince(ctx, pool, tbl.ID, 1, 4)
	require.NoError(t, err)
	require.False(t, removed, "the tags' delete and overwrite are off main")
	removed, err = writer.RowsRemovedSince(ctx, pool, tbl.ID, 1, 5)
	require.NoError(t, err)
	require.True(t, removed, "main's delete")
}
