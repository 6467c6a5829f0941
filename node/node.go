// Package node wires one `mink serve` process: configuration, the start
// and stop order, and the HTTP surfaces (docs/design.md §5).
//
// Start order: PostgreSQL pool (migrated), Kafka client, S3 API and cache,
// REST catalog, admin API, HTTP listener, then the cluster loop (register,
// take leases, run indexers and writers). Stop runs it backwards: the
// cluster loop stops jobs, releases leases and deletes the node row, then
// the HTTP server closes (see Node.Stop), then the clients.
package node

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/minkhq/mink/admin"
	"github.com/minkhq/mink/catalog"
	"github.com/minkhq/mink/cluster"
	"github.com/minkhq/mink/indexer"
	"github.com/minkhq/mink/kafka"
	"github.com/minkhq/mink/objects"
	"github.com/minkhq/mink/pgstore"
	"github.com/minkhq/mink/tail"
	"github.com/minkhq/mink/writer"
)

// Config is everything `mink serve` takes (docs/design.md §5, command line). Flag
// names are in brackets; each has a MINK_* variable and a YAML key.
type Config struct {
	// PostgresURL (--postgres, MINK_POSTGRES_URL). Required.
	PostgresURL string
	// KafkaBrokers (--kafka, MINK_KAFKA_BROKERS), HOST:PORT. Required.
	KafkaBrokers []string
	// Listen is the HTTP address (--listen). Default ":8181".
	Listen string
	// Advertise is the URL others reach this node at (--advertise).
	// Default http://127.0.0.1:<listen port>.
	Advertise string
	// NodeID (--node-id). Default hostname + random suffix.
	NodeID string
	// Roles (--roles): indexer, server. Default both.
	Roles []string
	// LeaseTTL is `lease_ttl` (--lease-ttl), docs/design.md §3.1. Default 30s.
	LeaseTTL time.Duration
	// MaxPartitions is `max_partitions` (--max-partitions), docs/design.md §3.3.
	MaxPartitions int
	// CacheDir (--cache-dir). Default a directory under the system temp dir.
	CacheDir string
	// CacheSize in bytes (--cache-size). Default 10 GiB.
	CacheSize int64
	// Warehouse is the S3 bucket name (--warehouse). Default "mink".
	Warehouse string
	// FlushInterval and RangeSize cut indexed ranges (docs/design.md §4.3).
	FlushInterval time.Duration
	RangeSize     int64
	// IndexMemory bounds the records the node's indexers hold (bytes;
	// indexer.Config.MemoryBudget). Default 128 MiB.
	IndexMemory int64
	// Pprof serves net/http/pprof at /debug/pprof/.
	Pprof bool
	// CommitInterval is the writer's commit period (docs/design.md §4.6).
	CommitInterval time.Duration
	Logger         *slog.Logger
}

func (c *Config) defaults() error {
	if c.PostgresURL == "" {
		return errors.New("node: --postgres is required")
	}
	if len(c.KafkaBrokers) == 0 {
		return errors.New("node: --kafka is required")
	}
	if c.Listen == "" {
		c.Listen = ":8181"
	}
	if c.NodeID == "" {
		host, _ := os.Hostname()
		var b [3]byte
		_, _ = rand.Read(b[:])
		c.NodeID = host + "-" + hex.EncodeToString(b[:])
	}
	if len(c.Roles) == 0 {
		c.Roles = []string{cluster.RoleIndexer, cluster.RoleServer}
	}
	for _, r := range c.Roles {
		if r != cluster.RoleIndexer && r != cluster.RoleServer {
			return fmt.Errorf("node: unknown role %q (roles are indexer, server)", r)
		}
	}
	if c.LeaseTTL == 0 {
		c.LeaseTTL = 30 * time.Second
	}
	if c.Warehouse == "" {
		c.Warehouse = "mink"
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.CacheDir == "" {
		c.CacheDir = filepath.Join(os.TempDir(), "mink-cache-"+c.NodeID)
	}
	return nil
}

// Node is a running `mink serve`.
type Node struct {
	cfg      Config
	log      *slog.Logger
	pool     *pgxpool.Pool
	kafka    *kafka.Client
	objects  *objects.Server
	cluster  *cluster.Cluster
	listener net.Listener
	server   *http.Server
	conns    conns
	cancel   context.CancelFunc
	done     chan struct{}
	stopOnce sync.Once
}

// Start brings a node up and returns once it is listening; the cluster
// loop runs in the background. Postgres being down at start is retried
// until ctx ends (a node recovers by itself).
func Start(ctx context.Context, cfg Config) (*Node, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	log := cfg.Logger.With("node_id", cfg.NodeID)
	n := &Node{cfg: cfg, log: log, done: make(chan struct{})}
	ok := false
	defer func() {
		if !ok {
			n.close()
		}
	}()

	var err error
	for {
		// A transaction left idle (a paused node) must not hold a lease row
		// locked past a third of the lease: others could not take it.
		idle := 10 * time.Second
		if cfg.LeaseTTL > 0 {
			idle = max(cfg.LeaseTTL/3, time.Second)
		}
		n.pool, err = pgstore.Open(ctx, pgstore.Config{URL: cfg.PostgresURL, MaxConns: 20, IdleInTransactionTimeout: idle})
		if err == nil {
			break
		}
		log.Warn("node: postgres not ready, retrying", "err", err)
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(2 * time.Second):
		}
	}
	if n.kafka, err = kafka.New(kafka.Config{Brokers: cfg.KafkaBrokers, Logger: log}); err != nil {
		return nil, err
	}

	n.listener, err = net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("node: listen %s: %w", cfg.Listen, err)
	}
	if cfg.Advertise == "" {
		cfg.Advertise = fmt.Sprintf("http://127.0.0.1:%d", n.listener.Addr().(*net.TCPAddr).Port)
		n.cfg.Advertise = cfg.Advertise
	}
	cfg.Advertise = strings.TrimRight(cfg.Advertise, "/")

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	ix := indexer.New(n.pool, n.kafka, indexer.Config{
		FlushInterval: cfg.FlushInterval, RangeSize: cfg.RangeSize, MemoryBudget: cfg.IndexMemory, Registerer: reg, Logger: log,
		OnBuilt: n.warm,
	})
	wr := writer.New(n.pool, n.kafka, writer.Config{CommitInterval: cfg.CommitInterval, Registerer: reg, Logger: log})
	n.cluster, err = cluster.New(n.pool, cluster.Config{
		NodeID: cfg.NodeID, AdvertiseURL: cfg.Advertise, Roles: cfg.Roles,
		LeaseTTL: cfg.LeaseTTL, MaxPartitions: cfg.MaxPartitions, Registerer: reg,
		Logger: cfg.Logger, // adds node_id itself
	}, jobs{ix: ix, wr: wr})
	if err != nil {
		return nil, err
	}
	n.objects, err = objects.New(objects.Config{
		NodeID: cfg.NodeID, Warehouse: cfg.Warehouse, CacheDir: cfg.CacheDir, CacheSize: cfg.CacheSize,
		Logger: cfg.Logger, Registerer: reg, // adds node_id itself
	}, n.pool, indexer.NewBuilder(n.pool, n.kafka), n.cluster.Members)
	if err != nil {
		return nil, err
	}
	// Loads are zero-lag (docs/design.md §4.4): a load commits the tail of
	// Kafka past the table's content as a child snapshot and answers it.
	loader := tail.New(n.pool, n.kafka, tail.Config{OnBuilt: n.warm, Registerer: reg, Logger: log})
	cat, err := catalog.New(catalog.Config{Warehouse: cfg.Warehouse, AdvertiseURL: cfg.Advertise, Logger: log,
		Loader: loader}, n.pool)
	if err != nil {
		return nil, err
	}
	adm := admin.New(n.pool, n.kafka, admin.Config{NodeID: cfg.NodeID, Warehouse: cfg.Warehouse, Logger: log,
		Local: func(what string) (any, bool) {
			switch what {
			case "cache":
				return n.objects.Stats(), true
			case "leases":
				return n.cluster.Held(), true
			}
			return nil, false
		}})

	mux := http.NewServeMux()
	mux.Handle("/v1/", cat)
	mux.Handle("/admin/v1/", adm)
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("GET /readyz", n.readyz)
	if cfg.Pprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	serveObjects := slices.Contains(cfg.Roles, cluster.RoleServer)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if !serveObjects {
			http.Error(w, "this node has no server role", http.StatusNotFound)
			return
		}
		n.objects.ServeHTTP(w, r)
	})
	// IdleTimeout closes keep-alive connections clients leave idle (some
	// open a new S3 client per table load and never close the old one).
	n.server = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 30 * time.Second,
		ConnState: n.conns.track}
	go func() {
		if err := n.server.Serve(n.listener); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("node: http server", "err", err)
		}
	}()

	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	n.cancel = cancel
	go func() {
		defer close(n.done)
		if err := n.cluster.Run(cctx); err != nil && !errors.Is(err, context.Canceled) {
			log.Error("node: cluster loop ended", "err", err)
		}
	}()
	log.Info("node: started", "listen", n.listener.Addr().String(), "advertise", cfg.Advertise, "roles", cfg.Roles)
	ok = true
	return n, nil
}

// warm keeps a data file the indexer just built when this node owns it.
func (n *Node) warm(key string, content []byte) {
	if n.objects == nil || !slices.Contains(n.cfg.Roles, cluster.RoleServer) {
		return
	}
	if owner, ok := cluster.Owner(n.cluster.Members(), key); ok && owner.ID == n.cfg.NodeID {
		n.objects.Put(key, content)
	}
}

func (n *Node) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := n.pool.Ping(ctx); err != nil {
		http.Error(w, "postgres unreachable: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	if !n.cluster.Ready() {
		http.Error(w, "not registered", http.StatusServiceUnavailable)
		return
	}
	fmt.Fprintln(w, "ready")
}

// ID returns the node id.
func (n *Node) ID() string { return n.cfg.NodeID }

// URL returns the advertised URL.
func (n *Node) URL() string { return n.cfg.Advertise }

// Stop stops the node cleanly (docs/design.md §3.1): jobs stop, leases are
// released, the node row is deleted (the others, notified, take the
// leases at once), then the HTTP server closes: requests in flight finish
// (for at most httpDrain), except reads waiting for a data file build,
// which answer 503 SlowDown so that the client retries elsewhere.
func (n *Node) Stop() {
	n.stopOnce.Do(func() {
		start := time.Now()
		if n.cancel != nil {
			n.cancel()
			<-n.done
		}
		loop := time.Since(start)
		n.close()
		n.log.Info("node: stopped", "seconds", time.Since(start).Seconds(),
			"cluster_seconds", loop.Seconds(), "http_and_clients_seconds", (time.Since(start) - loop).Seconds())
	})
}

// Done is closed when the node's cluster loop has ended.
func (n *Node) Done() <-chan struct{} { return n.done }

// httpDrain bounds the wait for HTTP requests in flight at a stop.
const httpDrain = 5 * time.Second

func (n *Node) close() {
	if n.objects != nil {
		n.objects.Close()
	}
	if n.server != nil {
		n.conns.closeFresh()
		ctx, cancel := context.WithTimeout(context.Background(), httpDrain)
		if err := n.server.Shutdown(ctx); err != nil {
			n.log.Warn("node: requests still in flight at stop; closing their connections", "err", err)
			_ = n.server.Close()
		}
		cancel()
	} else if n.listener != nil {
		n.listener.Close()
	}
	if n.kafka != nil {
		n.kafka.Close()
	}
	if n.pool != nil {
		n.pool.Close()
	}
}

// conns tracks the HTTP connections on which no request has come yet.
// http.Server.Shutdown closes idle connections at once but waits for such
// a fresh one as if a request were in flight, until it is 5 s old; clients
// leave them (a transport that dialed for a request another connection
// served, a TCP health check), and a stop would wait for them. Closing a
// fresh connection is as safe as closing an idle one.
type conns struct {
	mu       sync.Mutex
	fresh    map[net.Conn]struct{}
	stopping bool
}

func (c *conns) track(conn net.Conn, st http.ConnState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case st == http.StateNew && c.stopping:
		conn.Close()
	case st == http.StateNew:
		if c.fresh == nil {
			c.fresh = map[net.Conn]struct{}{}
		}
		c.fresh[conn] = struct{}{}
	default:
		delete(c.fresh, conn)
	}
}

// closeFresh closes the fresh connections, and every one accepted from
// now on.
func (c *conns) closeFresh() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopping = true
	for conn := range c.fresh {
		conn.Close()
	}
	c.fresh = nil
}

// jobs dispatches held leases to the indexer or the writer.
type jobs struct {
	ix *indexer.Indexer
	wr *writer.Writer
}

func (j jobs) Run(ctx context.Context, l cluster.Lease) error {
	if l.Kind == cluster.KindWriter {
		return j.wr.Run(ctx, l)
	}
	return j.ix.Run(ctx, l)
}
