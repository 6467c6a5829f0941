package testkit

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/cluster"
	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/kafka"
	"github.com/minkhq/mink/tables"
)

// Warehouse is the warehouse name of the tables a Fixture creates.
const Warehouse = "mink"

// Kafka is an in-process Kafka (kfake, one broker) with Mink's client on
// it; both are closed at cleanup.
type Kafka struct {
	Cluster *kfake.Cluster
	Client  *kafka.Client
}

// NewKafka starts a Kafka of one broker (opts may say otherwise, for
// example kfake.SeedTopics for its topics or kfake.NumBrokers) and Mink's
// client on it.
func NewKafka(t testing.TB, opts ...kfake.Opt) *Kafka {
	t.Helper()
	kf, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1)}, opts...)...)
	if err != nil {
		t.Fatalf("testkit: kfake: %v", err)
	}
	t.Cleanup(kf.Close)
	kc, err := kafka.New(kafka.Config{Brokers: kf.ListenAddrs()})
	if err != nil {
		t.Fatalf("testkit: kafka client: %v", err)
	}
	t.Cleanup(kc.Close)
	return &Kafka{Cluster: kf, Client: kc}
}

// Producer returns a client of the Kafka with opts, closed at cleanup.
func (k *Kafka) Producer(t testing.TB, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(k.Cluster.ListenAddrs()...)}, opts...)...)
	if err != nil {
		t.Fatalf("testkit: producer: %v", err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// Produce writes values to partition of topic and waits for the
// acknowledgement; the records' offsets follow in order.
func (k *Kafka) Produce(t testing.TB, topic string, partition int32, values ...string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(k.Cluster.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatalf("testkit: producer: %v", err)
	}
	defer cl.Close()
	recs := make([]*kgo.Record, len(values))
	for i, v := range values {
		recs[i] = &kgo.Record{Topic: topic, Partition: partition, Value: []byte(v)}
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatalf("testkit: produce: %v", err)
	}
}

// Fixture is a table on a topic of an in-process Kafka, in a fresh schema:
// what a unit test of a job (indexer, writer, tail loader) runs against.
type Fixture struct {
	*Kafka
	Pool  *pgxpool.Pool
	URL   string // the schema's connection URL (pgtest.Schema)
	Table *tables.Table
}

// NewFixture creates the topic def.Topic with the given partitions and the
// table def over it in warehouse Warehouse, each partition starting at
// offset 0.
func NewFixture(t testing.TB, partitions int32, def tables.Definition) *Fixture {
	t.Helper()
	pool, url := pgtest.Pool(t)
	k := NewKafka(t, kfake.SeedTopics(partitions, def.Topic))
	starts := make([]tables.PartitionStart, partitions)
	for p := range starts {
		starts[p] = tables.PartitionStart{Partition: int32(p)}
	}
	tbl, err := tables.Create(context.Background(), pool, Warehouse, def, starts)
	if err != nil {
		t.Fatalf("testkit: create table: %v", err)
	}
	return &Fixture{Kafka: k, Pool: pool, URL: url, Table: tbl}
}

// Take gives the lease of scope to holder, as the cluster loop does.
func (f *Fixture) Take(t testing.TB, scope, holder string) cluster.Lease {
	t.Helper()
	return Take(t, f.Pool, scope, holder)
}

// ProduceTo writes values to partition of the table's topic.
func (f *Fixture) ProduceTo(t testing.TB, partition int32, values ...string) {
	t.Helper()
	f.Produce(t, f.Table.Topic, partition, values...)
}
