package realkafka_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"sort"
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
	testkit.SkipUnlessCompat(t)
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

// TestTLSSCRAM round-trips records over SASL_SSL with SCRAM-SHA-512, and
// checks that the listener refuses a wrong password and a client without
// TLS.
func TestTLSSCRAM(t *testing.T) {
	testkit.SkipUnlessCompat(t)
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
