package realkafka_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/minkhq/mink/internal/realkafka"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/internal/tlsfiles"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// consumeAll reads topic from the start up to the partitions' high
// watermarks and returns the records in (partition, offset) order.
func consumeAll(t *testing.T, c *realkafka.Cluster, topic string) []*kgo.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ends, err := c.Admin().ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			t.Fatalf("end offset %s/%d: %v", o.Topic, o.Partition, o.Err)
		}
		if o.Offset > 0 {
			want[o.Partition] = o.Offset
		}
	})
	cl := c.Client(t, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var out []*kgo.Record
	for len(want) > 0 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consume %s: %v (left %v)", topic, err, want)
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Fatalf("fetch: %v", err) })
		fs.EachRecord(func(r *kgo.Record) {
			out = append(out, r)
			if r.Offset+1 >= want[r.Partition] {
				delete(want, r.Partition)
			}
		})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Partition != out[j].Partition {
			return out[i].Partition < out[j].Partition
		}
		return out[i].Offset < out[j].Offset
	})
	return out
}

func TestSingleBroker(t *testing.T) {
	realkafka.SkipUnlessCompat(t)
	start := time.Now()
	c := realkafka.Start(t, realkafka.Options{})
	t.Logf("Kafka %s, one broker up in %s at %v", c.Version(), time.Since(start).Round(time.Millisecond), c.Addrs())
	c.CreateTopic("events", 3, 1, nil)
	cl := c.Client(t, kgo.DefaultProduceTopic("events"))
	ctx := context.Background()
	for i := range 300 {
		r := &kgo.Record{Key: []byte(fmt.Sprint(i % 7)), Value: []byte(fmt.Sprintf("v%d", i))}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	recs := consumeAll(t, c, "events")
	if len(recs) != 300 {
		t.Fatalf("consumed %d records, want 300", len(recs))
	}
	seen := map[string]bool{}
	for _, r := range recs {
		seen[string(r.Value)] = true
	}
	for i := range 300 {
		if !seen[fmt.Sprintf("v%d", i)] {
			t.Fatalf("v%d not consumed", i)
		}
	}
}

// TestThreeBrokersLeaderKilled produces idempotently with acks=all to a
// topic of replication factor 3 and min.insync.replicas 2, kills the
// leader of partition 0 while producing, and checks that every
// acknowledged record is there after, at its offset, once.
func TestThreeBrokersLeaderKilled(t *testing.T) {
	realkafka.SkipUnlessCompat(t)
	start := time.Now()
	c := realkafka.Start(t, realkafka.Options{Brokers: 3})
	t.Logf("Kafka %s, three brokers up in %s", c.Version(), time.Since(start).Round(time.Millisecond))
	c.CreateTopic("events", 3, 3, map[string]string{"min.insync.replicas": "2"})
	cl := c.Client(t, kgo.DefaultProduceTopic("events"), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(5*time.Millisecond))

	type ack struct {
		p   int32
		off int64
	}
	var (
		mu     sync.Mutex
		acked  = map[string]ack{}
		failed int
	)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for n := 0; ; n++ {
			select {
			case <-stop:
				return
			default:
			}
			v := fmt.Sprintf("v%d", n)
			cl.Produce(context.Background(), &kgo.Record{Partition: int32(n % 3), Value: []byte(v)}, func(r *kgo.Record, err error) {
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					failed++
					return
				}
				acked[v] = ack{r.Partition, r.Offset}
			})
			time.Sleep(2 * time.Millisecond)
		}
	}()
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(acked) }
	testkit.Eventually(t, 30*time.Second, 20*time.Millisecond, "1000 acks", func() (bool, string) {
		return count() >= 1000, fmt.Sprint(count())
	})
	leader := c.Leader("events", 0)
	if leader < 0 {
		t.Fatal("partition 0 has no leader")
	}
	c.Kill(leader)
	t.Logf("killed node %d, leader of events/0, at %d acks", leader+1, count())
	before := count()
	testkit.Eventually(t, 60*time.Second, 20*time.Millisecond, "1000 more acks after the kill", func() (bool, string) {
		return count() >= before+1000, fmt.Sprint(count())
	})
	if nl := c.Leader("events", 0); nl == leader || nl < 0 {
		t.Fatalf("events/0 leader after the kill: %d", nl)
	}
	close(stop)
	<-done
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	restart := time.Now()
	c.Restart(leader)
	t.Logf("node %d back in the ISR in %s", leader+1, time.Since(restart).Round(time.Millisecond))

	recs := consumeAll(t, c, "events")
	got := map[string]ack{}
	for _, r := range recs {
		if _, dup := got[string(r.Value)]; dup {
			t.Fatalf("%s twice", r.Value)
		}
		got[string(r.Value)] = ack{r.Partition, r.Offset}
	}
	mu.Lock()
	defer mu.Unlock()
	for v, a := range acked {
		if g, ok := got[v]; !ok || g != a {
			t.Fatalf("acked %s at %+v, consumed at %+v (found %v)", v, a, g, ok)
		}
	}
	t.Logf("%d acked, %d failed, %d consumed", len(acked), failed, len(recs))
}

// TestTLSSCRAM round-trips records over SASL_SSL with SCRAM-SHA-512, and
// checks that the listener refuses a wrong password and a client without
// TLS.
func TestTLSSCRAM(t *testing.T) {
	realkafka.SkipUnlessCompat(t)
	c := realkafka.Start(t, realkafka.Options{TLS: true, SCRAM: map[string]string{"mink": "kafka-secret", "other": "other-secret"}})
	if c.CAFile() == "" || c.User() != "mink" || c.Mechanism() != "SCRAM-SHA-512" {
		t.Fatalf("CAFile %q, User %q, Mechanism %q", c.CAFile(), c.User(), c.Mechanism())
	}
	c.CreateTopic("secured", 2, 1, nil)
	cl := c.Client(t, kgo.DefaultProduceTopic("secured"))
	ctx := context.Background()
	for i := range 50 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(fmt.Sprintf("s%d", i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	if recs := consumeAll(t, c, "secured"); len(recs) != 50 {
		t.Fatalf("consumed %d records, want 50", len(recs))
	}

	bad := func(opts ...kgo.Opt) error {
		cl, err := kgo.NewClient(append(opts, kgo.SeedBrokers(c.Addrs()...), kgo.RequestRetries(0))...)
		if err != nil {
			return err
		}
		defer cl.Close()
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_, err = kadm.NewClient(cl).ListTopics(ctx)
		return err
	}
	pool, err := tlsfiles.CAPool(c.CAFile())
	if err != nil {
		t.Fatal(err)
	}
	tlsOpt := kgo.DialTLSConfig(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12})
	if err := bad(tlsOpt, kgo.SASL(scram.Auth{User: "mink", Pass: "kafka-secret"}.AsSha256Mechanism())); err != nil {
		t.Fatalf("SCRAM-SHA-256 as mink: %v", err)
	}
	if err := bad(tlsOpt, kgo.SASL(scram.Auth{User: "mink", Pass: "wrong"}.AsSha512Mechanism())); err == nil {
		t.Fatal("a wrong password was taken")
	} else {
		t.Logf("wrong password: %v", err)
	}
	if err := bad(kgo.SASL(scram.Auth{User: "mink", Pass: "kafka-secret"}.AsSha512Mechanism())); err == nil {
		t.Fatal("a client without TLS was taken")
	}
}

// TestCleanerAndRetention checks that the broker's log cleaner and
// retention really run under realkafka's settings: a compacted topic
// whose offsets have gaps after cleaning, and a topic whose log start
// offset moved past deleted segments.
func TestCleanerAndRetention(t *testing.T) {
	realkafka.SkipUnlessCompat(t)
	c := realkafka.Start(t, realkafka.Options{ServerProps: map[string]string{
		"log.cleaner.backoff.ms":            "200",
		"log.retention.check.interval.ms":   "500",
		"log.segment.delete.delay.ms":       "0",
		"log.cleaner.min.compaction.lag.ms": "0",
	}})
	ctx := context.Background()
	// Segments roll on the first append after segment.ms: produce in
	// rounds apart, so that each round starts a segment.
	rounds := func(topic string, n int, value func(round, i int) *kgo.Record) {
		cl := c.Client(t, kgo.DefaultProduceTopic(topic))
		for round := range n {
			for i := range 20 {
				if err := cl.ProduceSync(ctx, value(round, i)).FirstErr(); err != nil {
					t.Fatal(err)
				}
			}
			time.Sleep(250 * time.Millisecond)
		}
	}

	t.Run("compacted", func(t *testing.T) {
		c.CreateTopic("compacted", 1, 1, map[string]string{
			"cleanup.policy": "compact", "segment.ms": "100", "min.cleanable.dirty.ratio": "0.01",
			"delete.retention.ms": "100",
		})
		// Keys k0..k4 take 4 values a round; key "only-rN" one value in
		// round N: the cleaned log keeps those between removed records.
		rounds("compacted", 8, func(round, i int) *kgo.Record {
			key := fmt.Sprintf("k%d", i%5)
			if i == 10 {
				key = fmt.Sprintf("only-r%d", round)
			}
			return &kgo.Record{Key: []byte(key), Value: []byte(fmt.Sprintf("r%d-%d", round, i))}
		})
		var recs []*kgo.Record
		testkit.Eventually(t, 60*time.Second, 500*time.Millisecond, "the cleaner to compact", func() (bool, string) {
			recs = consumeAll(t, c, "compacted")
			return len(recs) < 100, fmt.Sprintf("%d of 160 records left", len(recs))
		})
		gaps, next := 0, int64(0)
		for _, r := range recs {
			if r.Offset != next {
				gaps++
			}
			next = r.Offset + 1
		}
		last := map[string]string{}
		for _, r := range recs {
			last[string(r.Key)] = string(r.Value)
		}
		t.Logf("%d records left, %d gaps, last values %v", len(recs), gaps, last)
		if gaps == 0 {
			t.Fatal("no gap in the compacted offsets")
		}
		for k := range 5 {
			if want := fmt.Sprintf("r7-%d", 15+k); last[fmt.Sprintf("k%d", k)] != want {
				t.Fatalf("k%d: last value %q, want %q", k, last[fmt.Sprintf("k%d", k)], want)
			}
		}
		for round := range 8 {
			if want := fmt.Sprintf("r%d-10", round); last[fmt.Sprintf("only-r%d", round)] != want {
				t.Fatalf("only-r%d: value %q, want %q", round, last[fmt.Sprintf("only-r%d", round)], want)
			}
		}
	})

	t.Run("retention", func(t *testing.T) {
		c.CreateTopic("retained", 1, 1, map[string]string{"segment.ms": "100", "retention.ms": "1000", "file.delete.delay.ms": "0"})
		rounds("retained", 4, func(round, i int) *kgo.Record {
			return &kgo.Record{Value: []byte(fmt.Sprintf("r%d-%d", round, i))}
		})
		testkit.Eventually(t, 60*time.Second, 250*time.Millisecond, "retention to delete segments", func() (bool, string) {
			starts, err := c.Admin().ListStartOffsets(ctx, "retained")
			if err != nil {
				return false, err.Error()
			}
			o, _ := starts.Lookup("retained", 0)
			return o.Offset > 0, fmt.Sprintf("log start offset %d", o.Offset)
		})
	})
}
