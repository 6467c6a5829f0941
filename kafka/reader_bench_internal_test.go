package kafka

import (
	"context"
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// cpuTime is the CPU time (user + system) the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkReaderFlights reads one partition of 500,000 small JSON values
// (about 90 B, flight records' shape; produced with franz-go's default
// batching and snappy compression, as the bench's indexing scenario does)
// from an in-process kfake broker: with a Reader, as an indexer does
// (records recycled once read), and with a bare franz-go consumer (default
// fetch settings, read_committed; the bare consume of bench/RESULTS.md).
// cpu-ns/record is the process's CPU time (kfake's included) per record.
func BenchmarkReaderFlights(b *testing.B) {
	const n = 500_000
	kf, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "f"))
	if err != nil {
		b.Fatal(err)
	}
	defer kf.Close()
	pc, err := kgo.NewClient(kgo.SeedBrokers(kf.ListenAddrs()...), kgo.DefaultProduceTopic("f"))
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	airports := []string{"LAS", "PHL", "SFO", "JFK", "ORD", "ATL", "DEN", "SEA", "BOS", "MIA"}
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{Value: fmt.Appendf(nil, `{"date":"2001-%02d-%02dT%02d:%02d:00Z","delay":%d,"distance":%d,"origin":%q,"destination":%q}`,
			1+i/40000, 1+i/1500%28, i/60%24, i%60, rng.IntN(200)-20, 100+rng.IntN(2500), airports[rng.IntN(10)], airports[rng.IntN(10)])}
	}
	if err := pc.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		b.Fatal(err)
	}
	pc.Close()
	kc, err := New(Config{Brokers: kf.ListenAddrs()})
	if err != nil {
		b.Fatal(err)
	}
	defer kc.Close()
	b.Run("reader", func(b *testing.B) {
		c0 := cpuTime()
		for b.Loop() {
			r, err := kc.NewReader("f", 0, 0)
			if err != nil {
				b.Fatal(err)
			}
			got := 0
			for got < n {
				recs, err := r.Poll(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				got += len(recs)
				Recycle(recs)
			}
			r.Close()
		}
		b.ReportMetric(float64((cpuTime()-c0).Nanoseconds())/float64(b.N*n), "cpu-ns/record")
	})
	b.Run("bare", func(b *testing.B) {
		c0 := cpuTime()
		for b.Loop() {
			cl, err := kgo.NewClient(kgo.SeedBrokers(kf.ListenAddrs()...), kgo.ConsumeTopics("f"),
				kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
			if err != nil {
				b.Fatal(err)
			}
			got := 0
			for got < n {
				fs := cl.PollFetches(context.Background())
				if err := fs.Err0(); err != nil {
					b.Fatal(err)
				}
				got += fs.NumRecords()
			}
			cl.Close()
		}
		b.ReportMetric(float64((cpuTime()-c0).Nanoseconds())/float64(b.N*n), "cpu-ns/record")
	})
}
