package indexer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/devenv"
	"github.com/minkhq/mink/indexer"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/tables"
)

// BenchmarkIndexUSGS measures the whole indexing path of one partition —
// read_committed fetch from Kafka over the wire, JSON decode, Parquet
// encode, statistics, and the fenced insert into Postgres — on the USGS
// feed repeated 10 times (17,070 records) in one partition. Run with
// -cpu 1 for the per-core figure.
func BenchmarkIndexUSGS(b *testing.B) {
	events := testkit.USGSEvents(b)
	f := testkit.NewFixture(b, 1, tables.Definition{Namespace: "bench", Name: "t0", Topic: "quakes", ValueFormat: "json",
		KeyFormat: "string", Schema: json.RawMessage(devenv.EarthquakesSchema)})
	cl, err := kgo.NewClient(kgo.SeedBrokers(f.Cluster.ListenAddrs()...), kgo.DefaultProduceTopic("quakes"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(b, err)
	var recs []*kgo.Record
	var bytes int64
	for rep := 0; rep < 10; rep++ {
		for _, e := range events {
			recs = append(recs, &kgo.Record{Key: []byte(e.ID), Value: e.Value, Timestamp: e.Time})
			bytes += int64(len(e.ID) + len(e.Value))
		}
	}
	require.NoError(b, cl.ProduceSync(context.Background(), recs...).FirstErr())
	cl.Close()
	ix := indexer.New(f.Pool, f.Client, indexer.Config{FlushInterval: time.Second, RangeSize: 4 << 20})

	b.SetBytes(bytes)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		tbl, err := tables.Create(context.Background(), f.Pool, "mink", tables.Definition{Namespace: "bench",
			Name: fmt.Sprintf("t%d", i+1), Topic: "quakes", ValueFormat: "json", KeyFormat: "string",
			Schema: json.RawMessage(devenv.EarthquakesSchema)}, []tables.PartitionStart{{Partition: 0}})
		require.NoError(b, err)
		f.Table = tbl
		l := f.Take(b, tables.PartitionScope(tbl.ID, 0), "bench")
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		b.StartTimer()
		go func() { done <- ix.Run(ctx, l) }()
		for indexedEnd(b, f, 0) < int64(len(recs)) {
			time.Sleep(2 * time.Millisecond)
		}
		b.StopTimer()
		cancel()
		require.NoError(b, <-done)
		b.StartTimer()
	}
	b.ReportMetric(float64(len(recs))*float64(b.N)/b.Elapsed().Seconds(), "records/s")
}
