// Package node wires one `mink serve` process: configuration, the start
// and stop order, and the HTTP surfaces (docs/design.md §5).
//
// Start order: the settings are checked (Config.Validate, before any
// connection), then the PostgreSQL pool (migrated), Kafka client, HTTP
// listener (which fixes the advertised URL), S3 API and cache, REST
// catalog, admin API and console (/ui), HTTP server, then the cluster loop (register, take
// leases, run indexers and writers). config.go decides what each part
// gets (plan); Start connects and starts them. Stop runs it backwards: the
// cluster loop stops jobs, releases leases and deletes the node row, then
// the HTTP server closes (see Node.Stop), then the clients.
package node

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/minkhq/mink/admin"
	"github.com/minkhq/mink/auth"
	"github.com/minkhq/mink/catalog"
	"github.com/minkhq/mink/cluster"
	"github.com/minkhq/mink/indexer"
	"github.com/minkhq/mink/kafka"
	"github.com/minkhq/mink/objects"
	"github.com/minkhq/mink/pgstore"
	"github.com/minkhq/mink/rangefile"
	"github.com/minkhq/mink/schemas"
	"github.com/minkhq/mink/tail"
	"github.com/minkhq/mink/ui"
	"github.com/minkhq/mink/writer"
)

// Node is a running `mink serve`.
type Node struct {
	cfg      Config
	log      *slog.Logger
	pool     *pgxpool.Pool
	kafka    *kafka.Client
	objects  *objects.Server
	registry *schemas.Registry
	secret   []byte
	auth     *auth.Authenticator // nil under auth none
	fkey     []byte              // auth.PurposeForward
	cluster  *cluster.Cluster
	listener net.Listener
	server   *http.Server
	conns    conns
	cancel   context.CancelFunc
	done     chan struct{}
	stopOnce sync.Once
}

// Start brings a node up and returns once it is listening; the cluster
// loop runs in the background. It validates cfg before it connects to
// anything (Config.Validate). Postgres being down at start is retried
// until ctx ends (a node recovers by itself).
func Start(ctx context.Context, cfg Config) (*Node, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	p := cfg.plan(reg)
	log := cfg.Logger.With("node_id", cfg.NodeID)
	n := &Node{cfg: cfg, log: log, done: make(chan struct{})}
	ok := false
	defer func() {
		if !ok {
			n.close()
		}
	}()

	var err error
	if n.pool, err = openPool(ctx, p.postgres, log); err != nil {
		return nil, err
	}
	// The secret every node derives its signing keys from (auth).
	if n.secret, err = auth.ClusterSecret(ctx, n.pool); err != nil {
		return nil, err
	}
	if p.auth.WithDefaults().Mode == auth.ModePrincipals {
		n.auth = auth.NewAuthenticator(p.auth, auth.NewStore(n.pool), n.secret)
		p.catalog.Auth, p.admin.Auth = n.auth, n.auth
		// The S3 API takes vended credentials only, of active principals.
		p.objects.Auth, p.objects.Active = auth.ModePrincipals, n.auth.Store().Active
	} else {
		log.Warn("node: auth none: anyone who reaches this node reads every table and uses the admin API")
	}
	n.fkey = auth.DeriveKey(n.secret, auth.PurposeForward)
	p.objects.ForwardKey, p.admin.ForwardKey = n.fkey, n.fkey
	if p.objects.PeerTLS, err = peerTLS(cfg.TLSCA); err != nil {
		return nil, fmt.Errorf("node: tls_ca %s: %w", cfg.TLSCA, err)
	}
	p.admin.PeerTLS = p.objects.PeerTLS
	if n.kafka, err = kafka.New(p.kafka); err != nil {
		return nil, err
	}
	if p.registry.URL != "" {
		// It does not connect: a registry that is down pauses only the
		// partitions that need a schema it has not stored yet.
		if n.registry, err = schemas.NewRegistry(p.registry); err != nil {
			return nil, err
		}
	}
	if n.listener, err = net.Listen("tcp", cfg.Listen); err != nil {
		return nil, fmt.Errorf("node: listen %s: %w", cfg.Listen, err)
	}
	scheme := "http"
	if cfg.TLSCert != "" {
		scheme = "https"
		certs, err := loadCertFiles(cfg.TLSCert, cfg.TLSKey, log)
		if err != nil {
			return nil, fmt.Errorf("node: tls_cert and tls_key: %w", err)
		}
		n.listener = tls.NewListener(n.listener, serverTLS(certs))
	}
	n.cfg.Advertise = strings.TrimRight(cmp.Or(cfg.Advertise,
		fmt.Sprintf("%s://127.0.0.1:%d", scheme, n.listener.Addr().(*net.TCPAddr).Port)), "/")
	p.advertise(n.cfg.Advertise)
	p.indexer.OnBuilt, p.tail.OnBuilt, p.admin.Local = n.warm, n.warm, n.local
	// One store of schemas for every job of the node: its caches are
	// shared (docs/design.md §4.7).
	sch := schemas.NewStore(n.pool, n.registrySource())
	sch.SetLog(n.log)
	p.indexer.Schemas, p.tail.Schemas, p.writer.Schemas, p.admin.Schemas = sch, sch, sch, sch

	ix := indexer.New(n.pool, n.kafka, p.indexer)
	wr := writer.New(n.pool, n.kafka, p.writer)
	if n.cluster, err = cluster.New(n.pool, p.cluster, jobs{ix: ix, wr: wr}); err != nil {
		return nil, err
	}
	// Vended S3 credentials are checked with the key they were made with.
	p.objects.CredentialsKey = auth.DeriveKey(n.secret, auth.PurposeCredentials)
	if n.objects, err = objects.New(p.objects, n.pool, rangefile.NewBuilder(n.pool, n.kafka, sch), n.cluster.Members); err != nil {
		return nil, err
	}
	// Loads are zero-lag (docs/design.md §4.4): a load commits the tail of
	// Kafka past the table's content as a child snapshot and answers it.
	p.catalog.Loader = tail.New(n.pool, n.kafka, p.tail)
	cat, err := catalog.New(p.catalog, n.pool)
	if err != nil {
		return nil, err
	}
	adm := admin.New(n.pool, n.kafka, p.admin)
	console := ui.New(adm, ui.Config{NodeID: cfg.NodeID, Auth: n.auth, Logger: log})

	// IdleTimeout closes keep-alive connections clients leave idle (some
	// open a new S3 client per table load and never close the old one).
	n.server = &http.Server{Handler: n.routes(cat, adm, console, reg), ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout: 30 * time.Second, ConnState: n.conns.track, ErrorLog: serverLog(log)}
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
	log.Info("node: started", "listen", n.listener.Addr().String(), "advertise", n.cfg.Advertise, "roles", cfg.Roles)
	ok = true
	return n, nil
}

// openPool opens the node's pool, retrying every 2 s while Postgres does
// not answer, until ctx ends.
func openPool(ctx context.Context, cfg pgstore.Config, log *slog.Logger) (*pgxpool.Pool, error) {
	for {
		pool, err := pgstore.Open(ctx, cfg)
		if err == nil {
			return pool, nil
		}
		log.Warn("node: postgres not ready, retrying", "err", err)
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(2 * time.Second):
		}
	}
}

// routes is the node's HTTP surface: the REST catalog, the admin API, the
// console (/ui), metrics and probes, pprof (behind adm's admin check), and
// the S3 API at every other path. A request for the S3 API bypasses the ServeMux, which
// would answer a path with "//", "." or ".." segments with a 307 redirect
// (text/html) where S3 answers its XML error for the key as sent.
func (n *Node) routes(cat http.Handler, adm *admin.Handler, console http.Handler, reg *prometheus.Registry) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/v1/", cat)
	mux.Handle("/admin/v1/", adm)
	mux.Handle("/ui", console)
	mux.Handle("/ui/", console)
	mux.Handle("GET /metrics", bearer(n.cfg.MetricsToken, promhttp.HandlerFor(reg, promhttp.HandlerOpts{})))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("GET /readyz", n.readyz)
	if n.cfg.Pprof {
		mux.Handle("/debug/pprof/", adm.Guard(http.HandlerFunc(pprof.Index)))
		mux.Handle("/debug/pprof/cmdline", adm.Guard(http.HandlerFunc(cmdline)))
		mux.Handle("/debug/pprof/profile", adm.Guard(http.HandlerFunc(pprof.Profile)))
		mux.Handle("/debug/pprof/symbol", adm.Guard(http.HandlerFunc(pprof.Symbol)))
		mux.Handle("/debug/pprof/trace", adm.Guard(http.HandlerFunc(pprof.Trace)))
	}
	serveObjects := slices.Contains(n.cfg.Roles, cluster.RoleServer)
	s3 := func(w http.ResponseWriter, r *http.Request) {
		if !serveObjects {
			http.Error(w, "this node has no server role", http.StatusNotFound)
			return
		}
		n.objects.ServeHTTP(w, r)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.muxRoute(r.URL.Path) {
			mux.ServeHTTP(w, r)
			return
		}
		s3(w, r)
	})
}

// muxRoute reports whether path is one of the node's routes but the S3
// API's: below /v1/, /admin/v1/ or /ui/, /debug/pprof/ under
// Config.Pprof, or /ui, /metrics, /healthz, /readyz.
func (n *Node) muxRoute(path string) bool {
	switch path {
	case "/ui", "/metrics", "/healthz", "/readyz":
		return true
	}
	return strings.HasPrefix(path, "/v1/") || strings.HasPrefix(path, "/admin/v1/") || strings.HasPrefix(path, "/ui/") ||
		(n.cfg.Pprof && strings.HasPrefix(path, "/debug/pprof/"))
}

// local answers the admin API's /admin/v1/nodes/{this node}/<what>.
func (n *Node) local(what string) (any, bool) {
	switch what {
	case "cache":
		return n.objects.Stats(), true
	case "leases":
		return n.cluster.Held(), true
	}
	return nil, false
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

// Auth returns the node's authenticator, nil under auth none.
func (n *Node) Auth() *auth.Authenticator { return n.auth }

// ID returns the node id.
func (n *Node) ID() string { return n.cfg.NodeID }

// URL returns the advertised URL.
func (n *Node) URL() string { return n.cfg.Advertise }

// SignForward marks r as forwarded by this node to this node, signed with
// the cluster's forward key (auth.SignForward), so this node serves a data
// file itself, whoever owns it: for tests and benchmarks in the node's
// process that read a file from a chosen node (r must be sent to this
// node: the signature names it).
func (n *Node) SignForward(r *http.Request) {
	auth.SignForward(n.fkey, r, n.cfg.NodeID, n.cfg.NodeID)
}

// Registry returns the node's Schema Registry client, or nil when
// Config.SchemaRegistry has no URL.
func (n *Node) Registry() *schemas.Registry { return n.registry }

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
	if n.registry != nil {
		n.registry.Close()
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

// registrySource is the node's schema registry, nil when none is
// configured (a nil *Registry must not become a non-nil Source).
func (n *Node) registrySource() schemas.Source {
	if n.registry == nil {
		return nil
	}
	return n.registry
}
