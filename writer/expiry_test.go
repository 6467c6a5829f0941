package writer_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/cluster"
	"github.com/minkhq/mink/datafile"
	"github.com/minkhq/mink/indexer"
	"github.com/minkhq/mink/pgstore"
	"github.com/minkhq/mink/tables"
	"github.com/minkhq/mink/writer"
)

// Expiry: once Kafka's log start passes into a committed file, the writer
// replaces it by the file of [log start, end) in an overwrite snapshot,
// fenced by its epoch: a writer whose lease was taken over rewrites nothing.
func TestExpiryRewritesStraddlingFileAndIsFenced(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, 1, tables.Definition{Namespace: "t", Name: "x", Topic: "x", ValueFormat: "raw"})
	pool, kf, kc, tbl := f.pool, f.kf, f.kc, f.tbl
	take := func(scope, holder string) cluster.Lease { return f.take(t, scope, holder) }
	cl, err := kgo.NewClient(kgo.SeedBrokers(kf.ListenAddrs()...), kgo.DefaultProduceTopic("x"))
	require.NoError(t, err)
	defer cl.Close()
	for i := 0; i < 10; i++ { // one batch per record: DeleteRecords cuts anywhere
		require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Value: []byte{byte(i)}}).FirstErr())
	}
	wait := func(what string, cond func() bool) { waitFor(t, what, cond) }
	liveRecords := func() (n int64) {
		require.NoError(t, pool.QueryRow(ctx, `SELECT coalesce(sum(record_count), 0) FROM data_files
			WHERE table_id = $1 AND committed_snapshot_id IS NOT NULL AND removed_snapshot_id IS NULL`, tbl.ID).Scan(&n))
		return n
	}
	ixCtx, stopIx := context.WithCancel(ctx)
	defer stopIx()
	ix := indexer.New(pool, kc, indexer.Config{FlushInterval: 50 * time.Millisecond})
	go func() { _ = ix.Run(ixCtx, take(tables.PartitionScope(tbl.ID, 0), "node-a")) }()

	w := writer.New(pool, kc, writer.Config{CommitInterval: 50 * time.Millisecond})
	stale := take(tables.WriterScope(tbl.ID), "node-a")
	wctx, stopW := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx, stale) }()
	wait("commit of 10 records", func() bool { return liveRecords() == 10 })
	stopW()
	<-done
	stopIx()

	// A new holder takes the writer lease; the log start moves to 4.
	current := take(tables.WriterScope(tbl.ID), "node-b")
	require.NoError(t, kf.DeleteRecords("x", 0, 4))
	snapshots := func() (n int) {
		require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM snapshots WHERE table_id = $1`, tbl.ID).Scan(&n))
		return n
	}
	before := snapshots()
	err = w.Run(ctx, stale)
	require.True(t, errors.Is(err, pgstore.ErrFenced), "stale writer: %v", err)
	require.Equal(t, before, snapshots(), "no snapshot from the stale writer")
	require.EqualValues(t, 10, liveRecords(), "no file removed by the stale writer")

	wctx, stopW = context.WithCancel(ctx)
	defer stopW()
	go func() { _ = w.Run(wctx, current) }()
	wait("rewrite from the log start", func() bool { return liveRecords() == 6 })
	var path string
	var start, end int64
	var liveFiles int
	require.NoError(t, pool.QueryRow(ctx, `SELECT path, start_offset, end_offset, count(*) OVER () FROM data_files
		WHERE table_id = $1 AND removed_snapshot_id IS NULL ORDER BY start_offset LIMIT 1`, tbl.ID).Scan(&path, &start, &end, &liveFiles))
	require.EqualValues(t, 4, start)
	require.Equal(t, fmt.Sprintf("t/x/data/0/4-%d-%d.parquet", end, datafile.EncoderVersion), path)
	var removed int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM data_files WHERE table_id = $1 AND removed_snapshot_id IS NOT NULL`, tbl.ID).Scan(&removed))
	require.Positive(t, removed)

	// The table's metadata: an overwrite snapshot with 6 records in total.
	var op string
	var meta []byte
	require.NoError(t, pool.QueryRow(ctx, `
		SELECT s.operation, m.content FROM tables t
		JOIN snapshots s ON s.table_id = t.id AND s.snapshot_id = t.current_snapshot_id
		JOIN metadata_files m ON m.path = substr(t.metadata_location, length('s3://mink/') + 1)
		WHERE t.id = $1`, tbl.ID).Scan(&op, &meta))
	require.Equal(t, "overwrite", op)
	md, err := table.ParseMetadataBytes(meta)
	require.NoError(t, err)
	require.Equal(t, table.OpOverwrite, md.CurrentSnapshot().Summary.Operation)
	require.Equal(t, "6", md.CurrentSnapshot().Summary.Properties["total-records"])
	require.Equal(t, strconv.Itoa(liveFiles), md.CurrentSnapshot().Summary.Properties["total-data-files"])

	// The builder rebuilds the new file from Kafka and it matches.
	b, err := indexer.NewBuilder(pool, kc).Build(ctx, path)
	require.NoError(t, err)
	require.NotEmpty(t, b)
}
