package clustertest_test

import (
	"os"
	"testing"
	"time"

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
