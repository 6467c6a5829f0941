package writer_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/internal/flights"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/rangefile"
	"github.com/minkhq/mink/schemas"
	"github.com/minkhq/mink/tables"
)

// BenchmarkAssemblyBuild measures what the default of
// write.target-file-size-bytes rests on (docs/design.md §4.6): the cold
// build of one data file (rangefile.Build: the Kafka fetch of its range from
// an in-process kfake broker over TCP, then the encode), by the size of
// the file, for flight records (json, compressible: MINK_FLIGHTS, default
// /work/shared/data/flights-3m.parquet; skipped when absent) and for raw
// random values (incompressible: file bytes ≈ record bytes). It reports
// the file's MiB, the records' MiB, seconds per build, record MiB/s and the
// peak Go heap in use during the builds above what was in use before them
// (sampled every 10 ms; the produced values and kfake's log are the base).
//
//	go test -run '^$' -bench AssemblyBuild -benchtime 2x ./writer/
func BenchmarkAssemblyBuild(b *testing.B) {
	b.Run("flights", func(b *testing.B) {
		path := os.Getenv("MINK_FLIGHTS")
		if path == "" {
			path = "/work/shared/data/flights-3m.parquet"
		}
		if _, err := os.Stat(path); err != nil {
			b.Skip("no flight records: ", err)
		}
		values, err := flights.JSON(path, 2_000_000)
		if err != nil {
			b.Fatal(err)
		}
		f := testkit.NewFixture(b, 1, tables.Definition{Namespace: "b", Name: "f", Topic: "f", ValueFormat: "json",
			Schema: json.RawMessage(flights.Schema)})
		produceValues(b, f, values)
		for _, n := range []int64{250_000, 500_000, 1_000_000, 2_000_000} {
			b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) { benchBuild(b, f, n, recordBytes(values[:n])) })
		}
	})
	b.Run("random", func(b *testing.B) {
		const valueSize = 1000
		var values [][]byte
		for range (128 << 20) / valueSize {
			v := make([]byte, valueSize)
			_, _ = rand.Read(v)
			values = append(values, v)
		}
		f := testkit.NewFixture(b, 1, tables.Definition{Namespace: "b", Name: "r", Topic: "r", ValueFormat: "raw"})
		produceValues(b, f, values)
		for _, mib := range []int64{16, 32, 64, 128} {
			n := mib << 20 / valueSize
			b.Run(fmt.Sprintf("MiB=%d", mib), func(b *testing.B) { benchBuild(b, f, n, recordBytes(values[:n])) })
		}
	})
}

func recordBytes(values [][]byte) (n int64) {
	for _, v := range values {
		n += int64(len(v))
	}
	return n
}

func benchBuild(b *testing.B, f *testkit.Fixture, n, recBytes int64) {
	ctx := context.Background()
	store := schemas.NewStore(f.Pool, nil)
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var ms runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
		}
	}()
	var size int64
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		built, err := rangefile.Build(ctx, f.Client, store, f.Table, f.Table, 0, 0, n, 0)
		if err != nil {
			b.Fatal(err)
		}
		size = built.Size
	}
	b.StopTimer()
	close(stop)
	<-done
	sec := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(float64(size)/(1<<20), "file-MiB")
	b.ReportMetric(float64(recBytes)/(1<<20), "record-MiB")
	b.ReportMetric(sec, "s/build")
	b.ReportMetric(float64(recBytes)/(1<<20)/sec, "record-MiB/s")
	b.ReportMetric(float64(peak.Load()-min(peak.Load(), base.HeapInuse))/(1<<20), "peak-heap-MiB")
	runtime.GC()
}

func produceValues(b *testing.B, f *testkit.Fixture, values [][]byte) {
	cl := f.Producer(b, kgo.DefaultProduceTopic(f.Table.Topic), kgo.ProducerBatchMaxBytes(1<<20),
		kgo.MaxBufferedRecords(1<<17), kgo.ProducerLinger(5*time.Millisecond))
	ctx := context.Background()
	for _, v := range values {
		cl.Produce(ctx, &kgo.Record{Value: v}, func(_ *kgo.Record, err error) {
			if err != nil {
				b.Error(err)
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		b.Fatal(err)
	}
}
