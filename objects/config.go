package objects

import (
	"context"
	"crypto/tls"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/minkhq/mink/auth"
	"github.com/minkhq/mink/internal/settings"
	"github.com/minkhq/mink/tables"
)

// Config configures a node's S3 read API. Zero values take the documented
// defaults; a negative number is an error (Validate).
type Config struct {
	// NodeID is this node's id (--node-id), as it appears in cluster
	// membership. It decides whether this node owns a data file (design
	// §3.5) and marks requests it forwards. Required.
	NodeID string

	// Warehouse is the S3 bucket name the API answers to (--warehouse):
	// tables live at s3://<Warehouse>/<ns>/<name>; the rule is
	// tables.CheckWarehouse. Default tables.DefaultWarehouse.
	Warehouse string

	// CacheDir is the directory of the data file cache (--cache-dir). It is
	// created if missing, and the cache files in it (named by the hex
	// SHA-256 of their key) are removed at start: the cache index lives in
	// memory only. Other files in the directory are left alone. Default
	// DefaultCacheDir(NodeID).
	CacheDir string

	// CacheSize bounds the bytes of data files kept in CacheDir
	// (--cache-size); the least recently used files are evicted past it. A
	// file larger than CacheSize is served but never cached. Default
	// DefaultCacheSize.
	CacheSize int64 `setting:"cache_size"`

	// MetadataCacheSize bounds the bytes of metadata files (metadata JSON,
	// manifest lists, manifests) kept in memory. They are immutable, so a
	// cached copy is never stale. Default DefaultMetadataCacheSize.
	MetadataCacheSize int64 `setting:"metadata_cache_size"`

	// ForwardConnectTimeout bounds connecting to a data file's owner when
	// forwarding a read to it (docs/design.md §3.5). Past it, this node builds the
	// file itself. Default DefaultForwardConnectTimeout.
	ForwardConnectTimeout time.Duration `setting:"forward_connect_timeout"`

	// ForwardHeaderTimeout bounds the wait for the owner's response headers
	// once the forwarded request is sent (it covers the owner's build on a
	// cache miss). Past it, this node builds the file itself. The body is
	// not bounded: it streams at the client's pace. Default
	// DefaultForwardHeaderTimeout.
	ForwardHeaderTimeout time.Duration `setting:"forward_header_timeout"`

	// ForwardBackoff is how long an owner that could not be connected to is
	// skipped: reads of its files are built here at once instead of each
	// waiting for a connection to fail. A timeout waiting for headers (a
	// slow owner, not a dead one) does not start a backoff. Default
	// DefaultForwardBackoff.
	ForwardBackoff time.Duration `setting:"forward_backoff"`

	// ForwardKey signs the reads this node forwards and checks those
	// forwarded to it (auth.SignForward, auth.VerifyForward): the cluster's
	// auth.DeriveKey(secret, auth.PurposeForward). A read marked forwarded
	// (auth.ForwardedHeader) that does not verify answers 403 AccessDenied,
	// so no client can make a node build a file it does not own. Empty:
	// this node forwards nothing (it builds every file it is asked for)
	// and refuses every read marked forwarded.
	ForwardKey []byte

	// PeerTLS verifies the owners this node forwards to over https (their
	// advertised URL's scheme): the CA pool of the cluster's certificates.
	// Nil: the system's roots.
	PeerTLS *tls.Config

	// QueryTimeout bounds the PostgreSQL read of a metadata file, so a
	// database that stops answering turns into 503 SlowDown rather than a
	// hung read. Default DefaultQueryTimeout.
	QueryTimeout time.Duration `setting:"query_timeout"`

	// RetryAfter is the Retry-After sent with 503 SlowDown (rounded up to
	// whole seconds). Default DefaultRetryAfter.
	RetryAfter time.Duration `setting:"retry_after"`

	// Auth is how reads are authenticated (--auth). auth.ModePrincipals
	// (the zero value means it): every request must be signed with AWS
	// Signature V4 by credentials auth.Vend made under CredentialsKey, and
	// may read only the keys below their prefixes (docs/design.md §5,
	// Security). auth.ModeNone: anyone reads everything.
	Auth auth.Mode

	// CredentialsKey checks vended credentials:
	// auth.DeriveKey(cluster secret, auth.PurposeCredentials). Required
	// (at least 16 bytes) by New when Auth is auth.ModePrincipals.
	CredentialsKey []byte

	// Region is the region the credential scope of every signature must
	// name: the s3.region the catalog hands out (catalog.Config.Region).
	// Default DefaultRegion.
	Region string

	// Active, when set, reports whether a principal is still active (not
	// revoked); the credentials of one that is not are refused with 403
	// AccessDenied. An error answers 503 SlowDown. Nil: no check.
	Active func(ctx context.Context, principal string) (bool, error)

	// Logger receives the API's log lines; each carries node_id, and those
	// about one object carry key. Nil means slog.Default().
	Logger *slog.Logger

	// Registerer, when set, receives the API's Prometheus metrics
	// (mink_objects_*). To run several Servers against one registry (tests,
	// several nodes in one process), wrap it with
	// prometheus.WrapRegistererWith(prometheus.Labels{"node_id": id}, reg).
	// Default: no registration.
	Registerer prometheus.Registerer
}

// Defaults of [Config].
const (
	DefaultCacheSize             = 10 << 30 // 10 GiB (--cache-size)
	DefaultMetadataCacheSize     = 64 << 20 // 64 MiB
	DefaultForwardConnectTimeout = 5 * time.Second
	DefaultForwardHeaderTimeout  = 30 * time.Second
	DefaultForwardBackoff        = 10 * time.Second
	DefaultQueryTimeout          = 10 * time.Second
	DefaultRetryAfter            = 2 * time.Second
	// DefaultRegion is catalog.DefaultRegion, the region engines sign
	// with unless the catalog is told another.
	DefaultRegion = "us-east-1"
)

// WithDefaults returns cfg with every zero field but NodeID and Registerer
// set to its default.
func (cfg Config) WithDefaults() Config {
	return settings.Defaults(cfg, Config{Warehouse: tables.DefaultWarehouse, CacheDir: DefaultCacheDir(cfg.NodeID),
		CacheSize: DefaultCacheSize, MetadataCacheSize: DefaultMetadataCacheSize,
		ForwardConnectTimeout: DefaultForwardConnectTimeout, ForwardHeaderTimeout: DefaultForwardHeaderTimeout,
		ForwardBackoff: DefaultForwardBackoff, QueryTimeout: DefaultQueryTimeout, RetryAfter: DefaultRetryAfter,
		Auth: auth.ModePrincipals, Region: DefaultRegion, Logger: slog.Default()})
}

// Validate returns a wrapped *settings.Error for a missing NodeID, a
// warehouse tables.CheckWarehouse rejects, a negative size or duration, or
// an unknown Auth mode. (The CredentialsKey comes from the cluster secret
// once the node is connected; New checks it.)
func (cfg Config) Validate() error {
	d := cfg.WithDefaults()
	var authErr error
	if d.Auth != auth.ModeNone && d.Auth != auth.ModePrincipals {
		authErr = settings.Errorf("auth", "%q is not a mode (%s, %s)", d.Auth, auth.ModePrincipals, auth.ModeNone)
	}
	return settings.Check("objects", settings.Required("node_id", cfg.NodeID),
		tables.CheckWarehouse(d.Warehouse), settings.Negative(cfg), authErr)
}

// DefaultCacheDir is the data file cache directory of node nodeID when
// none is configured: <os.TempDir()>/mink-cache-<nodeID>, with the
// characters of nodeID that are unsafe in a file name replaced by '_'.
func DefaultCacheDir(nodeID string) string {
	return filepath.Join(os.TempDir(), "mink-cache-"+safeName(nodeID))
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
