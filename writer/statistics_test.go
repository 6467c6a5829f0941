package writer_test

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/apache/datasketches-go/theta"
	"github.com/apache/iceberg-go/puffin"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/codec"
	"github.com/minkhq/mink/datafile"
	"github.com/minkhq/mink/indexer"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/tables"
	"github.com/minkhq/mink/writer"
)

// TestStatisticsMergeIncrementally: while records arrive and Kafka deletes
// the oldest (a delete snapshot), the writer writes statistics files from
// the sketches it merged before plus the new files' (and again from all of
// them after the delete). The last one equals the union of every live
// file's sketches computed here, and its estimate of the raw value column is
// the exact number of distinct values the table holds.
func TestStatisticsMergeIncrementally(t *testing.T) {
	ctx := context.Background()
	f := testkit.NewFixture(t, 1, tables.Definition{Namespace: "t", Name: "st", Topic: "st", ValueFormat: "raw"})
	pool, kf, kc, tbl := f.Pool, f.Cluster, f.Client, f.Table
	cl := f.Producer(t, kgo.DefaultProduceTopic("st"))
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	ix := indexer.New(pool, kc, indexer.Config{FlushInterval: 20 * time.Millisecond})
	ixDone := make(chan error, 1)
	go func() { ixDone <- ix.Run(runCtx, f.Take(t, tables.PartitionScope(tbl.ID, 0), "n")) }()
	w := writer.New(pool, kc, writer.Config{CommitInterval: 40 * time.Millisecond, StatisticsInterval: 60 * time.Millisecond})
	wDone := make(chan error, 1)
	go func() { wDone <- w.Run(runCtx, f.Take(t, tables.WriterScope(tbl.ID), "n")) }()

	// Values repeat every 70 records; offsets 0..399.
	const n, distinct, deleted = 400, 70, 120
	for i := range n {
		require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Value: fmt.Appendf(nil, "v%d", i%distinct)}).FirstErr())
		if i%40 == 39 {
			time.Sleep(150 * time.Millisecond)
		}
		if i == 250 {
			require.NoError(t, kf.DeleteRecords("st", 0, deleted))
		}
	}
	statsOf := func() (*table.StatisticsFile, table.Metadata) {
		var loc string
		var meta []byte
		require.NoError(t, pool.QueryRow(ctx, `SELECT t.metadata_location, m.content FROM tables t JOIN metadata_files m ON m.path = substr(t.metadata_location, length('s3://mink/') + 1) WHERE t.id = $1`, tbl.ID).Scan(&loc, &meta))
		md, err := table.ParseMetadataBytes(meta)
		require.NoError(t, err)
		for sf := range md.Statistics() {
			return &sf, md
		}
		return nil, md
	}
	var sf *table.StatisticsFile
	var md table.Metadata
	testkit.WaitFor(t, "statistics of the current snapshot holding offsets 120..399", func() bool {
		sf, md = statsOf()
		cur := md.CurrentSnapshot()
		return sf != nil && cur != nil && sf.SnapshotID == cur.SnapshotID && cur.Summary.Properties["total-records"] == strconv.Itoa(n-deleted)
	})
	stop()
	require.NoError(t, <-ixDone)
	require.NoError(t, <-wDone)
	var ops []string
	for _, s := range md.Snapshots() {
		ops = append(ops, string(s.Summary.Operation))
	}
	require.Contains(t, ops, "delete", "the records below the log start were deleted")

	var content []byte
	require.NoError(t, pool.QueryRow(ctx, `SELECT content FROM metadata_files WHERE path = $1`, tables.Key(sf.StatisticsPath)).Scan(&content))
	pr, err := puffin.NewReader(bytes.NewReader(content))
	require.NoError(t, err)

	// The union of every live file's sketches, from scratch.
	full := map[int32]*theta.Union{}
	for _, raw := range testkit.Column[[]byte](t, pool, `SELECT sketches FROM data_files WHERE table_id = $1 AND committed_snapshot_id IS NOT NULL AND removed_snapshot_id IS NULL
		UNION ALL SELECT sketches FROM tail_files WHERE table_id = $1 AND removed_snapshot_id IS NULL`, tbl.ID) {
		sks, err := datafile.UnmarshalSketches(raw)
		require.NoError(t, err)
		for id, b := range sks {
			if full[int32(id)] == nil {
				full[int32(id)], err = theta.NewUnion()
				require.NoError(t, err)
			}
			sk, err := theta.Decode(b, theta.DefaultSeed)
			require.NoError(t, err)
			require.NoError(t, full[int32(id)].Update(sk))
		}
	}
	valueID := int32(codec.FirstValueFieldID) // raw: the value column
	for _, bm := range pr.Blobs() {
		raw, err := pr.ReadBlobByMetadata(bm)
		require.NoError(t, err)
		got, err := theta.Decode(raw, theta.DefaultSeed)
		require.NoError(t, err)
		want, err := full[bm.Fields[0]].OrderedResult()
		require.NoError(t, err)
		require.Equal(t, want.Estimate(), got.Estimate(), "field %d", bm.Fields[0])
		switch bm.Fields[0] {
		case valueID:
			require.Equal(t, float64(distinct), got.Estimate())
		case codec.OffsetFieldID:
			require.Equal(t, float64(n-deleted), got.Estimate())
		}
	}
}
