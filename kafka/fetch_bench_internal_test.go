package kafka

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// BenchmarkReadRange reads a range of 16 MiB of random 1 KiB values (the
// default range size) from an in-process kfake broker: with fetch ahead
// (fetches of 2 MiB, ReadRange's setting, or 1 or 4 MiB; the next sent
// while one is parsed) and with one 32 MiB fetch at a time, as before.
// MB/s are value bytes.
func BenchmarkReadRange(b *testing.B) {
	const n = 16 << 10
	kf, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "r"))
	if err != nil {
		b.Fatal(err)
	}
	defer kf.Close()
	pc, err := kgo.NewClient(kgo.SeedBrokers(kf.ListenAddrs()...), kgo.DefaultProduceTopic("r"))
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	recs := make([]*kgo.Record, n)
	for i := range recs {
		v := make([]byte, 1024)
		for j := range v {
			v[j] = byte(rng.Uint32())
		}
		recs[i] = &kgo.Record{Value: v}
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
	saved := rangeFetch
	defer func() { rangeFetch = saved }()
	for _, m := range []struct {
		name  string
		bytes int32
		ahead bool
	}{{"ahead-2MiB", 2 << 20, true}, {"one-32MiB", 32 << 20, false}, {"ahead-1MiB", 1 << 20, true}, {"ahead-4MiB", 4 << 20, true}} {
		b.Run(m.name, func(b *testing.B) {
			rangeFetch.bytes, rangeFetch.ahead = m.bytes, m.ahead
			b.SetBytes(n * 1024)
			for b.Loop() {
				got, err := kc.ReadRange(context.Background(), "r", 0, 0, n)
				if err != nil || len(got) != n {
					b.Fatalf("%d records, %v", len(got), err)
				}
			}
		})
	}
}
