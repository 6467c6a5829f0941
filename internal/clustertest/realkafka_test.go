package clustertest_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/internal/clustertest"
	"github.com/minkhq/mink/internal/realkafka"
	"github.com/minkhq/mink/internal/testkit"
)

// The tests here start a real Kafka (Java) and PostgreSQL: only with
// MINK_COMPAT=1 does the binary need PostgreSQL.
func TestMain(m *testing.M) {
	if os.Getenv(realkafka.EnvCompat) != "1" {
		testkit.Main(m)
		return
	}
	testkit.MainPostgres(m)
}

const rate = 200 // records a second

// TestNodesOverRealKafka runs two `mink serve` nodes over a real single
// broker, kills one while records stream in, and checks that the table
// holds every acknowledged record exactly once.
func TestNodesOverRealKafka(t *testing.T) {
	realkafka.SkipUnlessCompat(t)
	k := realkafka.Start(t, realkafka.Options{})
	env := clustertest.New(t, clustertest.RealKafka(k))
	if env.Kafka != nil || env.Real != k {
		t.Fatal("RealKafka: the env has an in-process Kafka")
	}
	a, b := env.StartNode(clustertest.NodeOptions{}), env.StartNode(clustertest.NodeOptions{})
	env.CreateRawTable(a.URL(), "test", "events", "events", 4)
	prod := env.StartProducer("events", 4, rate)
	prod.WaitMore(t, rate, 20*time.Second)
	clustertest.WaitCommitted(t, b.URL(), "test.events", map[int32]int64{0: 1, 1: 1, 2: 1, 3: 1}, 30*time.Second)
	a.Kill()
	prod.WaitMore(t, 2*rate, 20*time.Second)
	clustertest.WaitExact(t, b.URL(), "test.events", prod.Stop(t))
}

// TestNodesOverRealKafkaTLSSCRAM runs a node over a real broker that takes
// SASL_SSL with SCRAM-SHA-512 only: --kafka-tls-ca, --kafka-sasl-* and
// MINK_KAFKA_SASL_PASSWORD reach it.
func TestNodesOverRealKafkaTLSSCRAM(t *testing.T) {
	realkafka.SkipUnlessCompat(t)
	k := realkafka.Start(t, realkafka.Options{TLS: true, SCRAM: map[string]string{"mink": "kafka-secret"}})
	env := clustertest.New(t, clustertest.RealKafka(k))
	a, b := env.StartNode(clustertest.NodeOptions{}), env.StartNode(clustertest.NodeOptions{})
	env.CreateRawTable(a.URL(), "test", "events", "events", 3)
	prod := env.StartProducer("events", 3, rate)
	prod.WaitMore(t, 2*rate, 20*time.Second)
	clustertest.WaitExact(t, b.URL(), "test.events", prod.Stop(t))
}

// TestNodesOverRealKafkaBrokerKilled runs two nodes over three brokers
// (replication factor 3, min.insync.replicas 2), kills the broker leading
// partition 0 while records stream in, starts it again, and checks the
// table exact: Mink's indexers follow the leader elections.
func TestNodesOverRealKafkaBrokerKilled(t *testing.T) {
	realkafka.SkipUnlessCompat(t)
	k := realkafka.Start(t, realkafka.Options{Brokers: 3, ServerProps: map[string]string{"min.insync.replicas": "2"}})
	env := clustertest.New(t, clustertest.RealKafka(k))
	a, b := env.StartNode(clustertest.NodeOptions{}), env.StartNode(clustertest.NodeOptions{})
	env.CreateRawTable(a.URL(), "test", "events", "events", 4)
	prod := env.StartProducer("events", 4, rate)
	prod.WaitMore(t, rate, 20*time.Second)
	clustertest.WaitCommitted(t, b.URL(), "test.events", map[int32]int64{0: 1, 1: 1, 2: 1, 3: 1}, 30*time.Second)
	leader := k.Leader("events", 0)
	k.Kill(leader)
	t.Logf("killed broker %d, leader of events/0", leader+1)
	prod.WaitMore(t, 2*rate, 30*time.Second)
	k.Restart(leader)
	prod.WaitMore(t, rate, 20*time.Second)
	clustertest.WaitExact(t, a.URL(), "test.events", prod.Stop(t))
}

// produceRounds produces n rounds of 20 records to partition 0 of topic,
// 250 ms apart (the topics below roll a segment every 100 ms, on the
// first append after it), with value(round, i) and key(round, i).
func produceRounds(t *testing.T, k *realkafka.Cluster, topic string, n int, key func(round, i int) string) {
	t.Helper()
	cl := k.Client(t, kgo.DefaultProduceTopic(topic))
	for round := range n {
		for i := range 20 {
			r := &kgo.Record{Key: []byte(key(round, i)), Value: []byte(fmt.Sprintf(`{"round":%d,"i":%d}`, round, i))}
			if err := cl.ProduceSync(context.Background(), r).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// readTopic returns every record of topic's partition 0 that a
// read_committed consumer reads from the log start offset, as Produced:
// it reads until 3 s pass without a record (nothing is produced then).
func readTopic(t *testing.T, k *realkafka.Cluster, topic string) clustertest.Produced {
	t.Helper()
	cl, err := kgo.NewClient(append(k.ClientOpts(), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	out := clustertest.Produced{Topic: topic}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		fs := cl.PollFetches(ctx)
		cancel()
		got := 0
		fs.EachRecord(func(r *kgo.Record) {
			got++
			out.Records = append(out.Records, clustertest.Record{Partition: r.Partition, Offset: r.Offset, Value: r.Value})
		})
		if got == 0 && len(out.Records) > 0 {
			return out
		}
	}
	t.Fatalf("read %s: no end after 60 s", topic)
	return out
}

// TestRealKafkaLogShapes creates tables over topics whose logs only a real
// broker shapes: compacted by the log cleaner (offsets with gaps), cut by
// retention (log start offset past 0), and written by transactions
// (commit and abort markers, aborted records that read_committed skips).
// Each table must hold exactly the records a read_committed consumer
// reads, at their offsets.
func TestRealKafkaLogShapes(t *testing.T) {
	realkafka.SkipUnlessCompat(t)
	k := realkafka.Start(t, realkafka.Options{ServerProps: map[string]string{
		"log.cleaner.backoff.ms":          "200",
		"log.retention.check.interval.ms": "500",
		"log.segment.delete.delay.ms":     "0",
	}})
	env := clustertest.New(t, clustertest.RealKafka(k))
	n := env.StartNode(clustertest.NodeOptions{})
	ctx := context.Background()

	k.CreateTopic("compacted", 1, 1, map[string]string{"cleanup.policy": "compact", "segment.ms": "100",
		"min.cleanable.dirty.ratio": "0.01"})
	produceRounds(t, k, "compacted", 8, func(round, i int) string {
		if i == 10 {
			return fmt.Sprintf("only-%d", round)
		}
		return fmt.Sprintf("k%d", i%5)
	})
	k.CreateTopic("retained", 1, 1, map[string]string{"segment.ms": "100", "retention.ms": "1500", "file.delete.delay.ms": "0"})
	produceRounds(t, k, "retained", 4, func(round, i int) string { return "" })

	testkit.Eventually(t, 60*time.Second, 250*time.Millisecond, "the cleaner and retention", func() (bool, string) {
		starts, err := k.Admin().ListStartOffsets(ctx, "retained")
		if err != nil {
			return false, err.Error()
		}
		s, _ := starts.Lookup("retained", 0)
		c := readTopic(t, k, "compacted")
		return s.Offset > 0 && len(c.Records) < 60, fmt.Sprintf("retained starts at %d, compacted has %d records", s.Offset, len(c.Records))
	})
	// Retention off, and more records to the retained topic: its table
	// starts at the log start offset and reads on.
	alt, err := k.Admin().AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "retention.ms", Value: kadm.StringPtr("-1")}}, "retained")
	if err == nil {
		err = alt[0].Err
	}
	if err != nil {
		t.Fatal(err)
	}
	produceRounds(t, k, "retained", 1, func(round, i int) string { return "" })

	k.CreateTopic("txn", 1, 1, nil)
	tx := k.Client(t, kgo.DefaultProduceTopic("txn"), kgo.TransactionalID("mink-test"))
	for batch := range 6 {
		if err := tx.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for i := range 10 {
			if err := tx.ProduceSync(ctx, &kgo.Record{Value: []byte(fmt.Sprintf(`{"batch":%d,"i":%d}`, batch, i))}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if err := tx.EndTransaction(ctx, kgo.TransactionEndTry(batch%3 != 1)); err != nil {
			t.Fatal(err)
		}
	}

	for _, topic := range []string{"compacted", "retained", "txn"} {
		env.CreateTable(n.URL(), map[string]any{"namespace": "test", "name": topic, "topic": topic, "value_format": "raw"})
	}
	for _, topic := range []string{"compacted", "retained", "txn"} {
		want := readTopic(t, k, topic)
		t.Logf("%s: %d records, offsets %d..%d", topic, len(want.Records), want.Records[0].Offset, want.Records[len(want.Records)-1].Offset)
		clustertest.WaitExact(t, n.URL(), "test."+topic, want)
	}
}
