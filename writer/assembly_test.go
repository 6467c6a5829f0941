package writer_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/datafile"
	"github.com/minkhq/mink/icebergmeta"
	"github.com/minkhq/mink/indexer"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/pgstore"
	"github.com/minkhq/mink/rangefile"
	"github.com/minkhq/mink/schemas"
	"github.com/minkhq/mink/tables"
	"github.com/minkhq/mink/writer"
)

// liveFile is a live committed data file row.
type liveFile struct {
	Key          string
	Start, End   int64
	Size, Recs   int64
	Schema       int
	SnapshotFrom int64
}

func liveFiles(t *testing.T, f *testkit.Fixture, tableID int64) []liveFile {
	t.Helper()
	rows, err := f.Pool.Query(context.Background(), `SELECT path, start_offset, end_offset, file_size, record_count, schema_id,
		committed_snapshot_id FROM data_files WHERE table_id = $1 AND committed_snapshot_id IS NOT NULL AND removed_snapshot_id IS NULL
		ORDER BY partition, start_offset`, tableID)
	require.NoError(t, err)
	var out []liveFile
	for rows.Next() {
		var l liveFile
		require.NoError(t, rows.Scan(&l.Key, &l.Start, &l.End, &l.Size, &l.Recs, &l.Schema, &l.SnapshotFrom))
		out = append(out, l)
	}
	require.NoError(t, rows.Err())
	return out
}

// currentMetadata parses the current metadata of table id.
func currentMetadata(t *testing.T, f *testkit.Fixture, id int64) table.Metadata {
	t.Helper()
	var meta []byte
	require.NoError(t, f.Pool.QueryRow(context.Background(), `
		SELECT m.content FROM tables t JOIN metadata_files m ON m.path = substr(t.metadata_location, length('s3://mink/') + 1)
		WHERE t.id = $1`, id).Scan(&meta))
	md, err := table.ParseMetadataBytes(meta)
	require.NoError(t, err)
	return md
}

// indexedEnd waits until partition p of f's table is indexed up to end.
func waitIndexed(t *testing.T, f *testkit.Fixture, p int32, end int64) {
	t.Helper()
	testkit.WaitFor(t, fmt.Sprintf("indexed to %d", end), func() bool {
		var e int64
		require.NoError(t, f.Pool.QueryRow(context.Background(), `SELECT coalesce(max(end_offset), 0) FROM ranges
			WHERE table_id = $1 AND partition = $2`, f.Table.ID, p).Scan(&e))
		return e >= end
	})
}

// produceRanges writes values one at a time to partition 0, each indexed
// as a range of its own before the next (the indexer of the fixture must
// run with a short flush interval).
func produceRanges(t *testing.T, f *testkit.Fixture, from int64, values ...string) {
	t.Helper()
	for i, v := range values {
		f.ProduceTo(t, 0, v)
		waitIndexed(t, f, 0, from+int64(i)+1)
	}
}

// Assembly (docs/design.md §4.6): a partition's small files, in the table
// and in its sparse dead-letter table, become one file each over the joint
// range, in replace snapshots that add exactly the rows they remove; the
// new files rebuild from their keys on any node (a fresh builder checks
// the recorded SHA-256).
func TestAssemblyMergesSmallFiles(t *testing.T) {
	ctx := context.Background()
	f := testkit.NewFixture(t, 1, tables.Definition{Namespace: "t", Name: "a", Topic: "a", ValueFormat: "json",
		Schema:     json.RawMessage(`{"type":"struct","fields":[{"id":1,"name":"n","type":"long","required":true}]}`),
		Properties: map[string]string{"history.expire.max-snapshot-age-ms": "200"}})
	pool, kc, tbl := f.Pool, f.Client, f.Table
	dlq, err := tables.DLQ(ctx, pool, tbl.ID)
	require.NoError(t, err)
	ix := indexer.New(pool, kc, indexer.Config{FlushInterval: 10 * time.Millisecond})
	pl := f.Take(t, tables.PartitionScope(tbl.ID, 0), "node-a")
	testkit.Start(t, func(ctx context.Context) error { return ix.Run(ctx, pl) })
	var values []string
	for i := 0; i < 24; i++ {
		v := fmt.Sprintf(`{"n":%d}`, i)
		if i%4 == 3 {
			v = `{"n":"bad"}` // a dead letter: [3,4), [7,8), … in the dead-letter table
		}
		values = append(values, v)
	}
	produceRanges(t, f, 0, values...)
	var tableFiles, dlqFiles int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE table_id = $1), count(*) FILTER (WHERE table_id = $2)
		FROM data_files WHERE table_id IN ($1, $2)`, tbl.ID, dlq.ID).Scan(&tableFiles, &dlqFiles))
	require.Greater(t, tableFiles, 2)
	require.Greater(t, dlqFiles, 2)

	reg := prometheus.NewRegistry()
	w := writer.New(pool, kc, writer.Config{CommitInterval: 50 * time.Millisecond,
		PartitionCheckInterval: 100 * time.Millisecond, CollectAfter: 200 * time.Millisecond, Registerer: reg})
	wl := f.Take(t, tables.WriterScope(tbl.ID), "node-a")
	testkit.Start(t, func(ctx context.Context) error { return w.Run(ctx, wl) })
	testkit.WaitFor(t, "one file per table", func() bool {
		return len(liveFiles(t, f, tbl.ID)) == 1 && len(liveFiles(t, f, dlq.ID)) == 1
	})
	// Every replaced file is counted once, in its table.
	require.EqualValues(t, tableFiles, testkit.CounterValue(t, reg, "mink_assembled_files_total", "table", tbl.FullName()))
	require.EqualValues(t, dlqFiles, testkit.CounterValue(t, reg, "mink_assembled_files_total", "table", dlq.FullName()))
	for _, c := range []struct {
		id      int64
		t       *tables.Table
		records int64
		files   int
	}{{tbl.ID, tbl, 18, tableFiles}, {dlq.ID, dlq, 6, dlqFiles}} {
		lf := liveFiles(t, f, c.id)[0]
		require.Equal(t, fmt.Sprintf("t/%s/data/0/0-24-%d.parquet", c.t.Name, datafile.EncoderVersion), lf.Key, "the key of the indexed range [0, 24)")
		require.Equal(t, c.records, lf.Recs)
		md := currentMetadata(t, f, c.id)
		cur := md.CurrentSnapshot()
		require.Equal(t, table.OpReplace, cur.Summary.Operation, c.t.Name)
		p := cur.Summary.Properties
		rec := strconv.FormatInt(c.records, 10)
		require.Equal(t, rec, p["added-records"], c.t.Name)
		require.Equal(t, rec, p["deleted-records"], c.t.Name)
		require.Equal(t, rec, p["total-records"], c.t.Name)
		require.Equal(t, "1", p["added-data-files"], c.t.Name)
		require.Equal(t, strconv.Itoa(c.files), p["deleted-data-files"], c.t.Name)
		require.Equal(t, "1", p["total-data-files"], c.t.Name)
		require.Equal(t, icebergmeta.CommittedByWriter, p[icebergmeta.SummaryCommittedBy])

		// Another node's rebuild from the key matches the recorded bytes.
		b, err := rangefile.NewBuilder(pool, kc, nil).Build(ctx, lf.Key)
		require.NoError(t, err)
		require.EqualValues(t, lf.Size, len(b))
	}
	// The rows: the assembled files hold exactly the records of [0, 24),
	// each once, in the right table.
	recs, err := kc.ReadRange(ctx, "a", 0, 0, 24)
	require.NoError(t, err)
	spec, err := tbl.Spec()
	require.NoError(t, err)
	res, err := datafile.Build(spec, recs)
	require.NoError(t, err)
	require.EqualValues(t, 18, res.Data.Stats.RecordCount)
	require.EqualValues(t, 6, res.DLQ.Stats.RecordCount)
	var sum []byte
	require.NoError(t, pool.QueryRow(ctx, `SELECT sha256 FROM data_files WHERE path = $1`, liveFiles(t, f, tbl.ID)[0].Key).Scan(&sum))
	require.Equal(t, res.Data.SHA256[:], sum)

	// Collection later deletes the replaced rows like other removed files,
	// once later commits expired the snapshots that listed them.
	replaced := testkit.Column[string](t, pool, `SELECT path FROM data_files WHERE table_id IN ($1, $2) AND removed_snapshot_id IS NOT NULL`,
		tbl.ID, dlq.ID)
	require.Len(t, replaced, tableFiles+dlqFiles)
	f.ProduceTo(t, 0, `{"n":24}`, `{"n":"bad"}`)
	testkit.WaitFor(t, "replaced rows collected", func() bool {
		return len(testkit.Column[string](t, pool, `SELECT path FROM data_files WHERE path = ANY($1)`, replaced)) == 0
	})
}

// The bound of docs/design.md §4.6: with a small target, a partition ends
// with at most ceil(bytes/target) + 2 files, more than one.
func TestAssemblyBound(t *testing.T) {
	const target = 6000
	f := testkit.NewFixture(t, 1, tables.Definition{Namespace: "t", Name: "b", Topic: "b", ValueFormat: "raw",
		Properties: map[string]string{tables.PropTargetFileSize: strconv.Itoa(target)}})
	pool, kc, tbl := f.Pool, f.Client, f.Table
	ix := indexer.New(pool, kc, indexer.Config{FlushInterval: 10 * time.Millisecond})
	pl := f.Take(t, tables.PartitionScope(tbl.ID, 0), "node-a")
	testkit.Start(t, func(ctx context.Context) error { return ix.Run(ctx, pl) })
	w := writer.New(pool, kc, writer.Config{CommitInterval: 50 * time.Millisecond})
	wl := f.Take(t, tables.WriterScope(tbl.ID), "node-a")
	testkit.Start(t, func(ctx context.Context) error { return w.Run(ctx, wl) })
	var values []string
	for range 40 {
		v := make([]byte, 1000) // incompressible: a file's size follows its records
		_, _ = rand.Read(v)
		values = append(values, string(v))
	}
	produceRanges(t, f, 0, values...)
	var last string
	testkit.WaitFor(t, "the bound", func() bool {
		lf := liveFiles(t, f, tbl.ID)
		var bytes, recs int64
		for _, x := range lf {
			bytes, recs = bytes+x.Size, recs+x.Recs
		}
		last = fmt.Sprintf("%d files, %d bytes, %d records", len(lf), bytes, recs)
		return recs == 40 && int64(len(lf)) <= (bytes+target-1)/target+2
	})
	lf := liveFiles(t, f, tbl.ID)
	require.Greater(t, len(lf), 2, last)
	end := int64(0)
	for _, x := range lf {
		require.Equal(t, end, x.Start, "files tile the partition")
		end = x.End
	}
	require.EqualValues(t, 40, end)
}

// A writer whose lease was taken over assembles nothing (its snapshot is
// rejected by the epoch check); the current holder then does.
func TestAssemblyIsFenced(t *testing.T) {
	ctx := context.Background()
	// Target 1 byte: every file is big enough, nothing is assembled while
	// the files are committed.
	f := testkit.NewFixture(t, 1, tables.Definition{Namespace: "t", Name: "c", Topic: "c", ValueFormat: "raw",
		Properties: map[string]string{tables.PropTargetFileSize: "1"}})
	pool, kc, tbl := f.Pool, f.Client, f.Table
	ix := indexer.New(pool, kc, indexer.Config{FlushInterval: 10 * time.Millisecond})
	pl := f.Take(t, tables.PartitionScope(tbl.ID, 0), "node-a")
	testkit.Start(t, func(ctx context.Context) error { return ix.Run(ctx, pl) })
	produceRanges(t, f, 0, "a", "b", "c", "d", "e")
	w := writer.New(pool, kc, writer.Config{CommitInterval: 50 * time.Millisecond})
	stale := f.Take(t, tables.WriterScope(tbl.ID), "node-a")
	job := testkit.Start(t, func(ctx context.Context) error { return w.Run(ctx, stale) })
	testkit.WaitFor(t, "5 files committed", func() bool { return len(liveFiles(t, f, tbl.ID)) == 5 })
	_ = job.Stop()

	// The default target from now on; another node takes the lease.
	_, err := pool.Exec(ctx, `UPDATE tables SET properties = properties - $2 WHERE id = $1 OR dlq_of = $1`, tbl.ID, tables.PropTargetFileSize)
	require.NoError(t, err)
	current := f.Take(t, tables.WriterScope(tbl.ID), "node-b")
	snapshots := func() (n int) {
		require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM snapshots WHERE table_id = $1`, tbl.ID).Scan(&n))
		return n
	}
	before := snapshots()
	err = w.Run(ctx, stale)
	require.True(t, errors.Is(err, pgstore.ErrFenced), "stale writer: %v", err)
	require.Equal(t, before, snapshots(), "no snapshot from the stale writer")
	require.Len(t, liveFiles(t, f, tbl.ID), 5, "nothing assembled by the stale writer")

	testkit.Start(t, func(ctx context.Context) error { return w.Run(ctx, current) })
	testkit.WaitFor(t, "assembly by the current holder", func() bool { return len(liveFiles(t, f, tbl.ID)) == 1 })
}

// Files of different schema versions are never assembled together: a
// range's version is a function of its records (docs/design.md §4.7), and
// the assembled file names one version. Each version's run becomes one
// file.
func TestAssemblyKeepsSchemaVersionsApart(t *testing.T) {
	ctx := context.Background()
	f := testkit.NewFixture(t, 1, tables.Definition{Namespace: "t", Name: "s", Topic: "s", ValueFormat: "json",
		Schema: json.RawMessage(`{"type":"struct","fields":[{"id":1,"name":"id","type":"long","required":false}]}`)})
	pool, kc, tbl := f.Pool, f.Client, f.Table
	store := schemas.NewStore(pool, nil)
	ix := indexer.New(pool, kc, indexer.Config{FlushInterval: 10 * time.Millisecond})
	pl := f.Take(t, tables.PartitionScope(tbl.ID, 0), "node-a")
	testkit.Start(t, func(ctx context.Context) error { return ix.Run(ctx, pl) })
	produceRanges(t, f, 0, `{"id":1}`, `{"id":2}`, `{"id":3}`)
	_, changed, err := store.Alter(ctx, tbl, iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 2, Name: "note", Type: iceberg.PrimitiveTypes.String}))
	require.NoError(t, err)
	require.True(t, changed)
	produceRanges(t, f, 3, `{"id":4,"note":"x"}`, `{"id":5}`, `{"id":6}`)
	var versions []int
	rows, err := pool.Query(ctx, `SELECT DISTINCT schema_id FROM data_files WHERE table_id = $1 ORDER BY 1`, tbl.ID)
	require.NoError(t, err)
	for rows.Next() {
		var v int
		require.NoError(t, rows.Scan(&v))
		versions = append(versions, v)
	}
	require.Equal(t, []int{0, 1}, versions, "the indexer follows the newest json version")

	w := writer.New(pool, kc, writer.Config{CommitInterval: 50 * time.Millisecond})
	wl := f.Take(t, tables.WriterScope(tbl.ID), "node-a")
	testkit.Start(t, func(ctx context.Context) error { return w.Run(ctx, wl) })
	testkit.WaitFor(t, "one file per version", func() bool { return len(liveFiles(t, f, tbl.ID)) == 2 })
	lf := liveFiles(t, f, tbl.ID)
	v := datafile.EncoderVersion
	require.Equal(t, []string{fmt.Sprintf("t/s/data/0/0-3-%d.parquet", v), fmt.Sprintf("t/s/data/0/3-6-%d-s1.parquet", v)},
		[]string{lf[0].Key, lf[1].Key})
	require.Equal(t, []int{0, 1}, []int{lf[0].Schema, lf[1].Schema})
	for _, x := range lf {
		b, err := rangefile.NewBuilder(pool, kc, nil).Build(ctx, x.Key)
		require.NoError(t, err)
		require.EqualValues(t, x.Size, len(b))
	}
}

// Repair after assembly (docs/design.md §4.7): the assembled table and
// dead-letter files keep one range, so a repair after an alter moves the
// dead letters the new version decodes, each record in one table.
func TestRepairAfterAssembly(t *testing.T) {
	ctx := context.Background()
	f := testkit.NewFixture(t, 1, tables.Definition{Namespace: "t", Name: "r", Topic: "r", ValueFormat: "json",
		Schema:     json.RawMessage(`{"type":"struct","fields":[{"id":1,"name":"id","type":"long","required":false}]}`),
		Properties: map[string]string{"mink.json.unknown-fields": "dead-letter"}})
	pool, kc, tbl := f.Pool, f.Client, f.Table
	dlq, err := tables.DLQ(ctx, pool, tbl.ID)
	require.NoError(t, err)
	ix := indexer.New(pool, kc, indexer.Config{FlushInterval: 10 * time.Millisecond})
	pl := f.Take(t, tables.PartitionScope(tbl.ID, 0), "node-a")
	testkit.Start(t, func(ctx context.Context) error { return ix.Run(ctx, pl) })
	produceRanges(t, f, 0, `{"id":1}`, `{"id":2,"note":"a"}`, `{"id":3}`, `{"id":"bad"}`, `{"id":5,"note":"b"}`, `{"id":6}`)
	w := writer.New(pool, kc, writer.Config{CommitInterval: 50 * time.Millisecond})
	wl := f.Take(t, tables.WriterScope(tbl.ID), "node-a")
	job := testkit.Start(t, func(ctx context.Context) error { return w.Run(ctx, wl) })
	testkit.WaitFor(t, "one file per table", func() bool {
		return len(liveFiles(t, f, tbl.ID)) == 1 && len(liveFiles(t, f, dlq.ID)) == 1
	})
	_ = job.Stop()
	store := schemas.NewStore(pool, nil)
	_, _, err = store.Alter(ctx, tbl, iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 2, Name: "note", Type: iceberg.PrimitiveTypes.String}))
	require.NoError(t, err)
	res, err := writer.Repair(ctx, pool, kc, store, tbl, writer.RepairOptions{}, nil)
	require.NoError(t, err)
	require.Equal(t, 1, res.Repaired)
	require.EqualValues(t, 2, res.Records)
	require.EqualValues(t, 1, res.DeadLetters)
	require.EqualValues(t, 5, liveFiles(t, f, tbl.ID)[0].Recs)
	require.EqualValues(t, 1, liveFiles(t, f, dlq.ID)[0].Recs)
}
