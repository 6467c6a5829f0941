package clustertest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/minkhq/mink/internal/netproxy"
	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/internal/realkafka"
)

// Defaults of the nodes a test starts: short enough that failures play
// out in seconds (docs/design.md §3: renewals every LeaseTTL/3).
const (
	DefaultLeaseTTL       = 3 * time.Second
	DefaultFlushInterval  = 200 * time.Millisecond
	DefaultCommitInterval = 200 * time.Millisecond
)

// Env is one test's cluster: its own Postgres schema, an in-process Kafka
// reached over TCP (or a real one, RealKafka), and the `mink serve`
// processes the test starts. Every process is killed at cleanup.
type Env struct {
	t           testing.TB
	bin         string
	PostgresURL string
	// Kafka is the in-process Kafka; nil with RealKafka.
	Kafka   *kfake.Cluster
	Brokers []string
	// Real is the real Kafka of RealKafka; nil otherwise.
	Real *realkafka.Cluster

	poolOnce sync.Once
	pool     *pgxpool.Pool

	mu      sync.Mutex
	nodes   []*Node
	seq     int
	proxies []*netproxy.Proxy
}

// Option configures an Env.
type Option func(*options)

type options struct {
	kafkaListen func(network, address string) (net.Listener, error)
	kafkaOpts   []kfake.Opt
	real        *realkafka.Cluster
}

// RealKafka runs the nodes against c (realkafka.Start) instead of an
// in-process Kafka: Env.Kafka is nil, Env.Brokers are c's, topics are
// created on c with its default replication factor, and the nodes and
// StartProducer reach c with its TLS and SASL settings
// (realkafka.Cluster.MinkArgs, ClientOpts). KafkaOptions and
// KafkaListenFn do not apply then.
func RealKafka(c *realkafka.Cluster) Option {
	return func(o *options) { o.real = c }
}

// KafkaOptions starts the in-process Kafka with opts too (for example
// kfake.TLS and SASL users; the nodes then need the matching flags).
func KafkaOptions(opts ...kfake.Opt) Option {
	return func(o *options) { o.kafkaOpts = append(o.kafkaOpts, opts...) }
}

// KafkaListenFn makes the in-process Kafka listen through fn (for
// example a netproxy.Switch's Listen, so that a test can cut Kafka off
// from every client, the nodes included).
func KafkaListenFn(fn func(network, address string) (net.Listener, error)) Option {
	return func(o *options) { o.kafkaListen = fn }
}

// New starts Kafka, creates the Postgres schema and builds (or reuses) the
// mink binary.
func New(t testing.TB, opts ...Option) *Env {
	t.Helper()
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	e := &Env{t: t, bin: Binary(t), PostgresURL: pgtest.Schema(t)}
	if o.real != nil {
		e.Real, e.Brokers = o.real, o.real.Addrs()
	} else {
		kopts := []kfake.Opt{kfake.NumBrokers(1)}
		if o.kafkaListen != nil {
			kopts = append(kopts, kfake.ListenFn(o.kafkaListen))
		}
		k, err := kfake.NewCluster(append(kopts, o.kafkaOpts...)...)
		if err != nil {
			t.Fatalf("clustertest: kafka: %v", err)
		}
		e.Kafka, e.Brokers = k, k.ListenAddrs()
	}
	// Cleanups run last-in first-out: nodes go before the proxies, Kafka
	// and the pool, and the schema (registered by pgtest.Schema above)
	// goes last. A real Kafka is its starter's to stop.
	t.Cleanup(e.close)
	t.Cleanup(e.killAll)
	return e
}

// close closes the pool, the proxies and the in-process Kafka.
func (e *Env) close() {
	if e.pool != nil {
		e.pool.Close()
	}
	e.mu.Lock()
	proxies := e.proxies
	e.mu.Unlock()
	for _, p := range proxies {
		_ = p.Close()
	}
	if e.Kafka != nil {
		e.Kafka.Close()
	}
}

// PostgresProxy starts a TCP proxy to the test's Postgres server and
// returns it with the test's Postgres URL rewritten to go through it.
// Nodes started with NodeOptions.PostgresURL set to that URL lose
// Postgres when the proxy is cut (Pool stays direct). The proxy is closed
// at cleanup, after the nodes are killed.
func (e *Env) PostgresProxy() (*netproxy.Proxy, string) {
	e.t.Helper()
	u, err := url.Parse(e.PostgresURL)
	if err != nil {
		e.t.Fatalf("clustertest: postgres url: %v", err)
	}
	p, err := netproxy.New(u.Host)
	if err != nil {
		e.t.Fatalf("clustertest: postgres proxy: %v", err)
	}
	e.mu.Lock()
	e.proxies = append(e.proxies, p)
	e.mu.Unlock()
	u.Host = p.Addr()
	return p, u.String()
}

// Pool is a pool on the test's schema, for observing leases, ranges and
// nodes directly (the nodes migrate the schema when they start).
func (e *Env) Pool() *pgxpool.Pool {
	e.poolOnce.Do(func() {
		p, err := pgxpool.New(context.Background(), e.PostgresURL)
		if err != nil {
			e.t.Fatalf("clustertest: pool: %v", err)
		}
		e.pool = p
	})
	return e.pool
}

// CreateTopic creates a Kafka topic (on a real Kafka with its default
// replication factor, and waits until every partition has a leader).
func (e *Env) CreateTopic(name string, partitions int) {
	e.t.Helper()
	if e.Real != nil {
		e.Real.CreateTopic(name, partitions, -1, nil)
		return
	}
	if err := e.Kafka.CreateTopic(name, int32(partitions), nil); err != nil {
		e.t.Fatalf("clustertest: create topic %s: %v", name, err)
	}
}

// CreateTable posts a table definition to a node's admin API.
func (e *Env) CreateTable(nodeURL string, def map[string]any) {
	e.t.Helper()
	body, err := json.Marshal(def)
	if err != nil {
		e.t.Fatal(err)
	}
	resp, err := http.Post(nodeURL+"/admin/v1/tables", "application/json", bytes.NewReader(body))
	if err != nil {
		e.t.Fatalf("clustertest: create table: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		msg, _ := io.ReadAll(resp.Body)
		e.t.Fatalf("clustertest: create table: %s: %s", resp.Status, bytes.TrimSpace(msg))
	}
}

// CreateRawTable creates topic (with partitions) and table ns.name over
// it with raw values, whose value column keeps the bytes as they are.
func (e *Env) CreateRawTable(nodeURL, ns, name, topic string, partitions int) {
	e.t.Helper()
	e.CreateTopic(topic, partitions)
	e.CreateTable(nodeURL, map[string]any{"namespace": ns, "name": name, "topic": topic, "value_format": "raw"})
}

// Nodes returns the nodes started so far (running or not).
func (e *Env) Nodes() []*Node {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]*Node(nil), e.nodes...)
}

// Running returns the nodes whose process is running (paused ones too).
func (e *Env) Running() []*Node {
	var out []*Node
	for _, n := range e.Nodes() {
		if n.Running() {
			out = append(out, n)
		}
	}
	return out
}

// Node returns the started node with this id, or nil.
func (e *Env) Node(id string) *Node {
	for _, n := range e.Nodes() {
		if n.ID == id {
			return n
		}
	}
	return nil
}

func (e *Env) killAll() {
	for _, n := range e.Nodes() {
		n.cleanup()
	}
}
