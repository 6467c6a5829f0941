package indexer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/indexer"
	"github.com/minkhq/mink/internal/flights"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/tables"
)

// BenchmarkIndexFlights measures the indexing path as bench's indexing
// scenario runs it — one indexer.Run per partition lease of a 4-partition
// topic, read_committed fetch from an in-process kfake broker over TCP,
// decode, encode, statistics, sketches and the fenced insert into
// Postgres — on 800,000 JSON values shaped like the flight records (about
// 90 B each; franz-go's default batching and snappy compression), into a
// raw and a json table. cpu-ns/record is the process's CPU time (kfake's
// included, Postgres's not) per record: the machine may be shared.
func BenchmarkIndexFlights(b *testing.B) {
	const partitions, n = 4, 800_000
	f := testkit.NewFixture(b, partitions, tables.Definition{Namespace: "bench", Name: "seed", Topic: "flights", ValueFormat: "raw"})
	cl, err := kgo.NewClient(kgo.SeedBrokers(f.Cluster.ListenAddrs()...), kgo.DefaultProduceTopic("flights"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(b, err)
	rng := rand.New(rand.NewPCG(1, 1))
	airports := []string{"LAS", "PHL", "SFO", "JFK", "ORD", "ATL", "DEN", "SEA", "BOS", "MIA", "LAX", "DFW", "PHX", "IAH", "MSP"}
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{Partition: int32(i % partitions), Value: fmt.Appendf(nil,
			`{"date":"2001-%02d-%02dT%02d:%02d:00Z","delay":%d,"distance":%d,"origin":%q,"destination":%q}`,
			1+i/70000, 1+i/2500%28, i/60%24, i%60, rng.IntN(200)-20, 100+rng.IntN(2500), airports[rng.IntN(15)], airports[rng.IntN(15)])}
	}
	require.NoError(b, cl.ProduceSync(context.Background(), recs...).FirstErr())
	cl.Close()
	ix := indexer.New(f.Pool, f.Client, indexer.Config{})
	for _, c := range []struct {
		format string
		schema json.RawMessage
	}{{"raw", nil}, {"json", json.RawMessage(flights.Schema)}} {
		b.Run(c.format, func(b *testing.B) {
			var cpu time.Duration
			for i := 0; b.Loop(); i++ {
				tbl, err := tables.Create(context.Background(), f.Pool, "mink", tables.Definition{Namespace: "bench",
					Name: fmt.Sprintf("%s_%d", c.format, i), Topic: "flights", ValueFormat: c.format, KeyFormat: "raw", Schema: c.schema},
					[]tables.PartitionStart{{Partition: 0}, {Partition: 1}, {Partition: 2}, {Partition: 3}})
				require.NoError(b, err)
				f.Table = tbl
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, partitions)
				runtime.GC()
				c0 := cpuTime()
				for p := range int32(partitions) {
					l := f.Take(b, tables.PartitionScope(tbl.ID, p), "bench")
					go func() { done <- ix.Run(ctx, l) }()
				}
				for p := range int32(partitions) {
					for indexedEnd(b, f, p) < n/partitions {
						time.Sleep(20 * time.Millisecond)
					}
				}
				cpu += cpuTime() - c0
				cancel()
				for range partitions {
					require.NoError(b, <-done)
				}
			}
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N*n), "cpu-ns/record")
		})
	}
}

// cpuTime is the CPU time (user + system) the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
