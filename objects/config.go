package objects

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Defaults of Config.
const (
	DefaultWarehouse             = "mink"
	DefaultCacheSize             = 10 << 30 // 10 GiB (--cache-size)
	DefaultMetadataCacheSize     = 64 << 20 // 64 MiB
	DefaultForwardConnectTimeout = 5 * time.Second
	DefaultForwardHeaderTimeout  = 30 * time.Second
	DefaultForwardBackoff        = 10 * time.Second
	DefaultQueryTimeout          = 10 * time.Second
	DefaultRetryAfter            = 2 * time.Second
)

// Config configures a node's S3 read API. Zero values take the documented
// defaults; New validates the result.
type Config struct {
	// NodeID is this node's id (--node-id), as it appears in cluster
	// membership. It decides whether this node owns a data file (design
	// §3.5) and marks requests it forwards. Required.
	NodeID string

	// Warehouse is the S3 bucket name the API answers to (--warehouse):
	// tables live at s3://<Warehouse>/<ns>/<name>. Default "mink".
	Warehouse string

	// CacheDir is the directory of the data file cache (--cache-dir). It is
	// created if missing, and the cache files in it (named by the hex
	// SHA-256 of their key) are removed at start: the cache index lives in
	// memory only. Other files in the directory are left alone. Default
	// <os.TempDir()>/mink-cache-<NodeID>.
	CacheDir string

	// CacheSize bounds the bytes of data files kept in CacheDir
	// (--cache-size); the least recently used files are evicted past it. A
	// file larger than CacheSize is served but never cached. Default 10 GiB.
	CacheSize int64

	// MetadataCacheSize bounds the bytes of metadata files (metadata JSON,
	// manifest lists, manifests) kept in memory. They are immutable, so a
	// cached copy is never stale. Default 64 MiB.
	MetadataCacheSize int64

	// ForwardConnectTimeout bounds connecting to a data file's owner when
	// forwarding a read to it (docs/design.md §3.5). Past it, this node builds the
	// file itself. Default 5s.
	ForwardConnectTimeout time.Duration

	// ForwardHeaderTimeout bounds the wait for the owner's response headers
	// once the forwarded request is sent (it covers the owner's build on a
	// cache miss). Past it, this node builds the file itself. The body is
	// not bounded: it streams at the client's pace. Default 30s.
	ForwardHeaderTimeout time.Duration

	// ForwardBackoff is how long an owner that could not be connected to is
	// skipped: reads of its files are built here at once instead of each
	// waiting for a connection to fail. A timeout waiting for headers (a
	// slow owner, not a dead one) does not start a backoff. Default 10s.
	ForwardBackoff time.Duration

	// QueryTimeout bounds the PostgreSQL read of a metadata file, so a
	// database that stops answering turns into 503 SlowDown rather than a
	// hung read. Default 10s.
	QueryTimeout time.Duration

	// RetryAfter is the Retry-After sent with 503 SlowDown (rounded up to
	// whole seconds). Default 2s.
	RetryAfter time.Duration

	// Logger receives the API's log lines; each carries node_id, and those
	// about one object carry key. Default slog.Default().
	Logger *slog.Logger

	// Registerer, when set, receives the API's Prometheus metrics
	// (mink_objects_*). To run several Servers against one registry (tests,
	// several nodes in one process), wrap it with
	// prometheus.WrapRegistererWith(prometheus.Labels{"node_id": id}, reg).
	// Default: no registration.
	Registerer prometheus.Registerer
}

// withDefaults returns cfg with defaults filled in, or an error for a value
// that cannot work.
func (cfg Config) withDefaults() (Config, error) {
	if cfg.NodeID == "" {
		return cfg, errors.New("objects: Config.NodeID is required")
	}
	if cfg.Warehouse == "" {
		cfg.Warehouse = DefaultWarehouse
	}
	if strings.ContainsAny(cfg.Warehouse, "/?#") {
		return cfg, fmt.Errorf("objects: warehouse %q is not a bucket name", cfg.Warehouse)
	}
	if cfg.CacheDir == "" {
		cfg.CacheDir = filepath.Join(os.TempDir(), "mink-cache-"+safeName(cfg.NodeID))
	}
	if cfg.CacheSize < 0 || cfg.MetadataCacheSize < 0 {
		return cfg, errors.New("objects: cache sizes must not be negative")
	}
	if cfg.CacheSize == 0 {
		cfg.CacheSize = DefaultCacheSize
	}
	if cfg.MetadataCacheSize == 0 {
		cfg.MetadataCacheSize = DefaultMetadataCacheSize
	}
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
	}{
		{&cfg.ForwardConnectTimeout, DefaultForwardConnectTimeout},
		{&cfg.ForwardHeaderTimeout, DefaultForwardHeaderTimeout},
		{&cfg.ForwardBackoff, DefaultForwardBackoff},
		{&cfg.QueryTimeout, DefaultQueryTimeout},
		{&cfg.RetryAfter, DefaultRetryAfter},
	} {
		if *d.v < 0 {
			return cfg, errors.New("objects: durations must not be negative")
		}
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return cfg, nil
}

// safeName keeps the characters of s that are safe in a file name.
func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, s)
}
