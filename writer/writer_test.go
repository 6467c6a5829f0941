package writer_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/indexer"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/pgstore"
	"github.com/minkhq/mink/tables"
	"github.com/minkhq/mink/writer"
)

// The writer commits indexed ranges as snapshots; a writer whose lease was
// taken over cannot commit (Postgres rejects the stale epoch) and stops.
func TestWriterCommitsAndIsFenced(t *testing.T) {
	ctx := context.Background()
	f := testkit.NewFixture(t, 2, tables.Definition{Namespace: "t", Name: "w", Topic: "w", ValueFormat: "raw"})
	pool, kc, tbl := f.Pool, f.Client, f.Table
	cl := f.Producer(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produce := func(p int32, n int) {
		var recs []*kgo.Record
		for i := 0; i < n; i++ {
			recs = append(recs, &kgo.Record{Topic: "w", Partition: p, Value: []byte{byte(i)}})
		}
		require.NoError(t, cl.ProduceSync(ctx, recs...).FirstErr())
	}
	snapshotCount := func() (n int) {
		require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM snapshots WHERE table_id = $1`, tbl.ID).Scan(&n))
		return n
	}
	uncommitted := func() (n int) {
		require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM data_files WHERE table_id = $1 AND committed_snapshot_id IS NULL`, tbl.ID).Scan(&n))
		return n
	}
	wait := func(what string, cond func() bool) { testkit.WaitFor(t, what, cond) }

	ix := indexer.New(pool, kc, indexer.Config{FlushInterval: 50 * time.Millisecond})
	for p := int32(0); p < 2; p++ {
		l := f.Take(t, tables.PartitionScope(tbl.ID, p), "node-a")
		testkit.Start(t, func(ctx context.Context) error { return ix.Run(ctx, l) })
	}

	reg := prometheus.NewRegistry()
	w := writer.New(pool, kc, writer.Config{CommitInterval: 50 * time.Millisecond, Registerer: reg})
	wl := f.Take(t, tables.WriterScope(tbl.ID), "node-a")
	wctx, stopW := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx, wl) }()
	produce(0, 10)
	produce(1, 7)
	wait("commit of 17 records", func() bool {
		var total int64
		_ = pool.QueryRow(ctx, `SELECT coalesce(sum(record_count), 0) FROM data_files WHERE table_id = $1 AND committed_snapshot_id IS NOT NULL`, tbl.ID).Scan(&total)
		return total == 17
	})
	committed := snapshotCount()
	require.GreaterOrEqual(t, committed, 1)

	// The metadata the table points at parses and lists every committed row.
	var loc string
	var meta []byte
	require.NoError(t, pool.QueryRow(ctx, `SELECT t.metadata_location, m.content FROM tables t JOIN metadata_files m ON m.path = substr(t.metadata_location, length('s3://mink/') + 1) WHERE t.id = $1`, tbl.ID).Scan(&loc, &meta))
	md, err := table.ParseMetadataBytes(meta)
	require.NoError(t, err)
	require.Equal(t, "17", md.CurrentSnapshot().Summary.Properties["total-records"])
	require.EqualValues(t, committed, len(md.Snapshots()))

	// Another node takes the writer lease; the old writer's next commit is
	// rejected and it stops.
	f.Take(t, tables.WriterScope(tbl.ID), "node-b")
	produce(0, 5)
	select {
	case err := <-done:
		require.True(t, errors.Is(err, pgstore.ErrFenced), "got %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("stale writer kept running")
	}
	require.Equal(t, 1.0, testkit.CounterValue(t, reg, "mink_fenced_writes_total", "job", "writer"), "the fenced commit is counted")
	stopW()
	require.Equal(t, committed, snapshotCount(), "no snapshot from the stale writer")
	require.Positive(t, uncommitted(), "new ranges wait for the current writer")
	var stillLoc string
	require.NoError(t, pool.QueryRow(ctx, `SELECT metadata_location FROM tables WHERE id = $1`, tbl.ID).Scan(&stillLoc))
	require.Equal(t, loc, stillLoc)
}
