package writer_test

import (
	"cmp"
	"context"
	"path"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/indexer"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/tables"
	"github.com/minkhq/mink/writer"
)

// TestSnapshotExpiryAndCollection: with a 200 ms max snapshot age, commits
// expire old snapshots, also those of an earlier writer epoch; collection then deletes their rows, the manifest
// lists and manifests only they listed, and the rows of data files removed
// (below the log start) before every remaining snapshot. What remains is
// exactly what the remaining snapshots list, and iceberg-go plans the
// current snapshot from it.
func TestSnapshotExpiryAndCollection(t *testing.T) {
	ctx := context.Background()
	f := testkit.NewFixture(t, 1, tables.Definition{Namespace: "t", Name: "c", Topic: "c", ValueFormat: "raw",
		Properties: map[string]string{"history.expire.max-snapshot-age-ms": "200", "commit.manifest.min-count-to-merge": "3",
			// No assembly: files removed below the log start are the ones collected.
			tables.PropTargetFileSize: "1"}})
	pool, kf, kc, tbl := f.Pool, f.Cluster, f.Client, f.Table
	cl := f.Producer(t, kgo.DefaultProduceTopic("c"))
	count := func(q string, args ...any) (n int) {
		require.NoError(t, pool.QueryRow(ctx, q, args...).Scan(&n))
		return n
	}

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	ix := indexer.New(pool, kc, indexer.Config{FlushInterval: 20 * time.Millisecond})
	ixDone := make(chan error, 1)
	go func() { ixDone <- ix.Run(runCtx, f.Take(t, tables.PartitionScope(tbl.ID, 0), "n")) }()
	w := writer.New(pool, kc, writer.Config{CommitInterval: 40 * time.Millisecond,
		PartitionCheckInterval: 100 * time.Millisecond, CollectAfter: 300 * time.Millisecond, StatisticsInterval: 80 * time.Millisecond})
	wDone := make(chan error, 1)
	firstCtx, stopFirst := context.WithCancel(runCtx)
	go func() { wDone <- w.Run(firstCtx, f.Take(t, tables.WriterScope(tbl.ID), "n")) }()

	produced := 0
	// Every statistics file the writer stored while the test ran.
	seenStats := map[string]bool{}
	produceFor := func(d time.Duration) {
		for end := time.Now().Add(d); time.Now().Before(end); produced++ {
			require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Value: []byte{byte(produced)}}).FirstErr())
			time.Sleep(50 * time.Millisecond)
			for _, p := range testkit.Column[string](t, pool, `SELECT path FROM metadata_files WHERE table_id = $1 AND path LIKE '%.puffin'`, tbl.ID) {
				seenStats[p] = true
			}
		}
	}
	produceFor(time.Second)
	// The writer lease changes hands: the new holder expires (and later
	// collects) snapshots written under the old epoch.
	stopFirst()
	require.NoError(t, <-wDone)
	go func() { wDone <- w.Run(runCtx, f.Take(t, tables.WriterScope(tbl.ID), "m")) }()
	produceFor(300 * time.Millisecond)
	require.NoError(t, kf.DeleteRecords("c", 0, 5))
	deadline := time.Now().Add(30 * time.Second)
	for count(`SELECT count(*) FROM data_files WHERE table_id = $1 AND removed_snapshot_id IS NOT NULL`, tbl.ID) == 0 {
		require.True(t, time.Now().Before(deadline), "no file removed below the log start")
		produceFor(100 * time.Millisecond)
	}
	// The current metadata lists statistics (an 80 ms job; on a loaded
	// machine every snapshot that had some may have expired at a check).
	currentHasStats := func() bool {
		var b []byte
		require.NoError(t, pool.QueryRow(ctx, `SELECT m.content FROM tables t JOIN metadata_files m ON m.table_id = t.id
			WHERE t.id = $1 AND m.path = $2`, tbl.ID, tables.Key(testkit.Column[string](t, pool,
			`SELECT metadata_location FROM tables WHERE id = $1`, tbl.ID)[0])).Scan(&b))
		md, err := table.ParseMetadataBytes(b)
		require.NoError(t, err)
		for range md.Statistics() {
			return true
		}
		return false
	}
	for count(`SELECT count(*) FROM data_files WHERE table_id = $1 AND removed_snapshot_id IS NOT NULL`, tbl.ID) > 0 ||
		count(`SELECT count(*) FROM snapshots WHERE table_id = $1 AND expired_at IS NOT NULL`, tbl.ID) == 0 || !currentHasStats() {
		require.True(t, time.Now().Before(deadline), "removed files never collected")
		produceFor(100 * time.Millisecond)
	}
	stop()
	require.NoError(t, <-ixDone)
	require.NoError(t, <-wDone)
	commits := count(`SELECT last_sequence_number FROM tables WHERE id = $1`, tbl.ID)
	require.Greater(t, commits, 10, "the test made enough commits")

	// The current metadata lists exactly the unexpired snapshot rows.
	var loc string
	require.NoError(t, pool.QueryRow(ctx, `SELECT metadata_location FROM tables WHERE id = $1`, tbl.ID).Scan(&loc))
	files := map[string][]byte{}
	rows, err := pool.Query(ctx, `SELECT path, content FROM metadata_files WHERE table_id = $1`, tbl.ID)
	require.NoError(t, err)
	for rows.Next() {
		var p string
		var b []byte
		require.NoError(t, rows.Scan(&p, &b))
		files[p] = b
	}
	require.NoError(t, rows.Err())
	md, err := table.ParseMetadataBytes(files[tables.Key(loc)])
	require.NoError(t, err)
	var inMetadata []int64
	for _, s := range md.Snapshots() {
		inMetadata = append(inMetadata, s.SnapshotID)
	}
	slices.Sort(inMetadata)
	require.Equal(t, sortedColumn[int64](t, pool, `SELECT snapshot_id FROM snapshots WHERE table_id = $1 AND expired_at IS NULL`, tbl.ID),
		inMetadata)
	require.Less(t, len(inMetadata), commits/2, "snapshots expired")

	// Statistics: the metadata's entries are of its snapshots, and their
	// files are stored.
	var current []string
	for sf := range md.Statistics() {
		require.NotNil(t, md.SnapshotByID(sf.SnapshotID), "statistics of snapshot %d, which expired", sf.SnapshotID)
		require.Contains(t, files, tables.Key(sf.StatisticsPath))
		current = append(current, tables.Key(sf.StatisticsPath))
	}
	require.NotEmpty(t, current, "statistics files written")

	// Manifest lists, manifests and statistics files stored = those the
	// remaining rows name (a statistics file names its snapshot).
	var named []string
	rows, err = pool.Query(ctx, `SELECT snapshot_id, manifest_list, manifests FROM snapshots WHERE table_id = $1`, tbl.ID)
	require.NoError(t, err)
	rowSnapshots := map[string]bool{}
	for rows.Next() {
		var id int64
		var list string
		var ms []string
		require.NoError(t, rows.Scan(&id, &list, &ms))
		named = append(append(named, tables.Key(list)), ms...)
		rowSnapshots[strconv.FormatInt(id, 10)] = true
	}
	collected := 0
	for p := range seenStats {
		snap, _, _ := strings.Cut(path.Base(p), "-")
		_, stored := files[p]
		if rowSnapshots[snap] || slices.Contains(current, p) {
			require.True(t, stored, "statistics file %s of a remaining snapshot was deleted", p)
			named = append(named, p)
		} else if !stored {
			collected++
		}
	}
	for p := range files {
		if strings.HasSuffix(p, ".puffin") && !seenStats[p] {
			named = append(named, p) // written after the last look
		}
	}
	require.Positive(t, collected, "statistics files of collected snapshots were deleted")
	slices.Sort(named)
	named = slices.Compact(named)
	var stored []string
	for p := range files {
		if !strings.HasSuffix(p, ".metadata.json") {
			stored = append(stored, p)
		}
	}
	slices.Sort(stored)
	require.Equal(t, named, stored)

	// iceberg-go plans the current snapshot: the live files, from offset 5.
	fs := iceio.NewMemFS()
	for p, b := range files {
		require.NoError(t, fs.WriteFile("s3://mink/"+p, b))
	}
	it := table.New(table.Identifier{"t", "c"}, md, loc, func(context.Context) (iceio.IO, error) { return fs, nil }, nil)
	tasks, err := it.Scan().PlanFiles(ctx)
	require.NoError(t, err)
	var planned []string
	for _, task := range tasks {
		planned = append(planned, tables.Key(task.File.FilePath()))
	}
	slices.Sort(planned)
	require.Equal(t, sortedColumn[string](t, pool, `SELECT path FROM data_files WHERE table_id = $1 AND committed_snapshot_id IS NOT NULL`, tbl.ID),
		planned)
	first := int64(-1)
	for _, p := range planned {
		ref, ok := tables.ParseDataFileKey(p)
		require.True(t, ok, p)
		if first < 0 || ref.Start < first {
			first = ref.Start
		}
	}
	require.EqualValues(t, 5, first, "the table starts at the log start")
}

// sortedColumn returns the values of query's one column, sorted.
func sortedColumn[T cmp.Ordered](t *testing.T, pool *pgxpool.Pool, query string, args ...any) []T {
	t.Helper()
	out := testkit.Column[T](t, pool, query, args...)
	slices.Sort(out)
	return out
}

// TestCollectKeepsFilesOfRetainedSnapshots: thinning expires snapshots in
// the middle of the history, so the snapshot that removed a file may be
// collected while an older one that lists it is retained. Collection keeps
// a removed file's row while a remaining snapshot's sequence number lies
// in the file's [committed, removed), and only then.
func TestCollectKeepsFilesOfRetainedSnapshots(t *testing.T) {
	ctx := context.Background()
	f := testkit.NewFixture(t, 1, tables.Definition{Namespace: "t", Name: "k", Topic: "k", ValueFormat: "raw"})
	pool, tbl := f.Pool, f.Table
	// Snapshots 1 to 4 (sequence numbers alike): 1 and 4 retained, 2 and 3
	// expired an hour ago (thinned).
	for seq := int64(1); seq <= 4; seq++ {
		var expired *time.Time
		if seq == 2 || seq == 3 {
			at := time.Now().Add(-time.Hour)
			expired = &at
		}
		_, err := pool.Exec(ctx, `INSERT INTO snapshots (table_id, snapshot_id, sequence_number, operation, manifest_list,
			metadata_location, manifests, expired_at) VALUES ($1, $2, $2, 'append', $3, 'm', '{}', $4)`,
			tbl.ID, seq, "t/k/metadata/snap-"+strconv.FormatInt(seq, 10)+".avro", expired)
		require.NoError(t, err)
	}
	// Tail files by [committed, removed) sequence numbers.
	for _, tf := range []struct {
		key  string
		c, r int64
	}{
		{"t/k/data/0/0-1-2.parquet", 1, 3}, // listed by 1 (retained) and 2
		{"t/k/data/0/1-2-2.parquet", 2, 3}, // listed by 2 only
		{"t/k/data/0/2-3-2.parquet", 1, 2}, // listed by 1 only
		{"t/k/data/0/3-4-2.parquet", 3, 4}, // listed by 3 only
	} {
		_, err := pool.Exec(ctx, `INSERT INTO tail_files (path, table_id, partition, start_offset, end_offset, encoder_version,
			file_size, sha256, record_count, stats, committed_snapshot_id, removed_snapshot_id, committed_sequence_number,
			removed_sequence_number) VALUES ($1, $2, 0, 0, 1, 2, 1, '\x00', 1, '{}', $3, $4, $3, $4)`, tf.key, tbl.ID, tf.c, tf.r)
		require.NoError(t, err)
	}
	w := writer.New(pool, f.Client, writer.Config{CommitInterval: time.Second, CollectAfter: time.Minute})
	require.NoError(t, w.Collect(ctx, f.Take(t, tables.WriterScope(tbl.ID), "n"), tbl))
	require.Equal(t, []int64{1, 4}, sortedColumn[int64](t, pool, `SELECT snapshot_id FROM snapshots WHERE table_id = $1`, tbl.ID))
	require.Equal(t, []string{"t/k/data/0/0-1-2.parquet", "t/k/data/0/2-3-2.parquet"},
		sortedColumn[string](t, pool, `SELECT path FROM tail_files WHERE table_id = $1`, tbl.ID),
		"the rows of the files snapshot 1 lists stay; the others go")
}
