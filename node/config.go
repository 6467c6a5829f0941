package node

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/minkhq/mink/admin"
	"github.com/minkhq/mink/auth"
	"github.com/minkhq/mink/catalog"
	"github.com/minkhq/mink/cluster"
	"github.com/minkhq/mink/indexer"
	"github.com/minkhq/mink/internal/settings"
	"github.com/minkhq/mink/kafka"
	"github.com/minkhq/mink/objects"
	"github.com/minkhq/mink/pgstore"
	"github.com/minkhq/mink/schemas"
	"github.com/minkhq/mink/tail"
	"github.com/minkhq/mink/writer"
)

// Defaults of [Config] that are the node's own. The others are the
// defaults of the package each setting goes to, named on each field.
const (
	// DefaultListen is the HTTP address of the catalog, S3 and admin APIs.
	DefaultListen = ":8181"
	// postgresConns caps a node's PostgreSQL pool: lease rounds, indexers,
	// writers, loads and reads of metadata files share it.
	postgresConns = 20
)

// Config is everything `mink serve` takes (docs/design.md §5, command
// line). Each field names its setting: the YAML key (lease_ttl), whose flag
// is --lease-ttl and variable MINK_LEASE_TTL. Zero fields take the
// defaults documented on each; a negative number is an error (Validate).
type Config struct {
	// PostgresURL is postgres (MINK_POSTGRES_URL). Required.
	PostgresURL string
	// KafkaBrokers is kafka (MINK_KAFKA_BROKERS), HOST:PORT. Required.
	KafkaBrokers []string
	// KafkaTLS is kafka_tls: {enabled, ca_file, cert_file, key_file,
	// server_name} (--kafka-tls, --kafka-tls-ca, …); KafkaSASL is
	// kafka_sasl: {mechanism, username, password, token_file,
	// oauth_token_url, oauth_client_id, oauth_client_secret, oauth_scopes}
	// (--kafka-sasl-mechanism, …). Zero: plaintext, no authentication.
	KafkaTLS  kafka.TLS
	KafkaSASL kafka.SASL
	// Listen is listen, the HTTP address. Default DefaultListen.
	Listen string
	// Advertise is advertise, the URL others reach this node at. Default
	// http://127.0.0.1:<listen port>, https:// with TLSCert.
	Advertise string
	// TLSCert and TLSKey are tls_cert and tls_key, PEM files of the node's
	// certificate (chain) and private key. Set (both or neither): the
	// listener serves HTTPS only, TLS 1.2 or later, and reads the files
	// again when they change on disk (looked at every 5 s at most), so a
	// rotated certificate needs no restart.
	TLSCert, TLSKey string
	// TLSCA is tls_ca, a PEM file of the CA certificates nodes verify each
	// other's https with when they forward (docs/design.md §5), added to
	// the system's roots. Empty: the system's roots alone.
	TLSCA string
	// NodeID is node_id. Default hostname + random suffix.
	NodeID string
	// Roles is roles: indexer, server. Default cluster.DefaultRoles().
	Roles []string
	// LeaseTTL is lease_ttl (docs/design.md §3.1). Default
	// cluster.DefaultLeaseTTL.
	LeaseTTL time.Duration
	// MaxPartitions is max_partitions (docs/design.md §3.3). 0 = no cap.
	MaxPartitions int
	// CacheDir is cache_dir. Default objects.DefaultCacheDir(NodeID).
	CacheDir string
	// CacheSize is cache_size, in bytes. Default objects.DefaultCacheSize.
	CacheSize int64
	// Warehouse is warehouse, the S3 bucket name. Default
	// tables.DefaultWarehouse.
	Warehouse string
	// FlushInterval (flush_interval) and RangeSize (range_size, bytes) cut
	// indexed ranges (docs/design.md §4.3). Defaults
	// indexer.DefaultFlushInterval and indexer.DefaultRangeSize.
	FlushInterval time.Duration
	RangeSize     int64
	// IndexMemory is index_memory: it bounds the records the node's
	// indexers hold (bytes). Default indexer.DefaultMemoryBudget.
	IndexMemory int64
	// Pprof is pprof: serve net/http/pprof at /debug/pprof/.
	Pprof bool
	// MetricsToken is metrics_token (--metrics-token,
	// MINK_METRICS_TOKEN): when set, GET /metrics needs "Authorization:
	// Bearer <MetricsToken>" (401 otherwise), since its labels name every
	// table (docs/design.md §5, Security). Empty: /metrics is open, as
	// /healthz and /readyz always are.
	MetricsToken string
	// CommitInterval is commit_interval, the writer's commit period
	// (docs/design.md §4.6). Default writer.DefaultCommitInterval.
	CommitInterval time.Duration
	// StatisticsInterval is the writer's statistics period (docs/design.md
	// §4.6). Default writer.DefaultStatisticsInterval.
	StatisticsInterval time.Duration
	// SchemaRegistry is schema_registry: {url, username, password, token,
	// ca_file, cert_file, key_file} (--schema-registry URL,
	// --schema-registry-user, …), the
	// Schema Registry of the avro, protobuf and json-schema formats. Empty
	// URL: no registry.
	SchemaRegistry schemas.RegistryConfig
	// Auth is auth: auth.ModePrincipals (the zero value; the catalog and
	// admin API need principals' bearer tokens, the S3 API vended
	// credentials) or auth.ModeNone (anyone reads everything; logged as a
	// warning at start). docs/design.md §5, security.
	Auth auth.Mode
	// TokenTTL (token_ttl) and CredentialsTTL (credentials_ttl) are the
	// lifetimes of bearer tokens and of vended credentials. Defaults
	// auth.DefaultTokenTTL and auth.DefaultCredentialsTTL.
	TokenTTL       time.Duration
	CredentialsTTL time.Duration
	// Logger receives the node's log lines, each with node_id. Nil means
	// slog.Default().
	Logger *slog.Logger
}

// WithDefaults returns c with the defaults the node decides or reads
// itself filled in (Listen, NodeID, Roles, LeaseTTL, Logger). The other
// zero fields are left to the package each goes to.
func (c Config) WithDefaults() Config {
	c.Listen = cmp.Or(c.Listen, DefaultListen)
	if c.NodeID == "" {
		host, _ := os.Hostname()
		var b [3]byte
		_, _ = rand.Read(b[:])
		c.NodeID = host + "-" + hex.EncodeToString(b[:])
	}
	if len(c.Roles) == 0 {
		c.Roles = cluster.DefaultRoles()
	}
	c.LeaseTTL = cmp.Or(c.LeaseTTL, cluster.DefaultLeaseTTL)
	c.Logger = cmp.Or(c.Logger, slog.Default())
	return c
}

// Validate returns the first setting of c that cannot work, before
// anything connects: every package's checks, run on the config the node
// gives it. The error wraps a *settings.Error, whose Key names the
// setting.
func (c Config) Validate() error {
	c = c.WithDefaults()
	if err := settings.Required("postgres", c.PostgresURL); err != nil {
		return err
	}
	if err := settings.CheckHostPort(c.Listen, true); err != nil {
		return settings.Errorf("listen", "%q is not an address to listen on: %v", c.Listen, err)
	}
	if err := c.checkTLS(); err != nil {
		return err
	}
	// An Advertise left empty becomes the listener's URL, which is valid.
	c.Advertise = cmp.Or(c.Advertise, "http://127.0.0.1")
	return c.plan(nil).validate()
}

// plan is the configuration of each part of a node, decided from its
// Config alone. Start adds the hooks that need the running node (OnBuilt,
// Local) and the listener's URL when Advertise is empty.
type plan struct {
	postgres pgstore.Config
	kafka    kafka.Config
	cluster  cluster.Config
	indexer  indexer.Config
	writer   writer.Config
	objects  objects.Config
	tail     tail.Config
	catalog  catalog.Config
	admin    admin.Config
	registry schemas.RegistryConfig
	auth     auth.Config
}

// plan derives the parts' configs from c (with its defaults); reg receives
// every part's metrics.
func (c Config) plan(reg prometheus.Registerer) plan {
	log := c.Logger.With("node_id", c.NodeID)
	return plan{
		// A transaction left idle (a paused node) must not hold a lease row
		// locked past a third of the lease: others could not take it.
		postgres: pgstore.Config{URL: c.PostgresURL, MaxConns: postgresConns,
			IdleInTransactionTimeout: max(c.LeaseTTL/3, time.Second)},
		kafka: kafka.Config{Brokers: c.KafkaBrokers, TLS: c.KafkaTLS, SASL: c.KafkaSASL, Logger: log},
		// cluster and objects add node_id to their log lines themselves.
		cluster: cluster.Config{NodeID: c.NodeID, AdvertiseURL: c.Advertise, Roles: c.Roles,
			LeaseTTL: c.LeaseTTL, MaxPartitions: c.MaxPartitions, Registerer: reg, Logger: c.Logger},
		indexer: indexer.Config{FlushInterval: c.FlushInterval, RangeSize: c.RangeSize, MemoryBudget: c.IndexMemory,
			Registerer: reg, Logger: log},
		writer: writer.Config{CommitInterval: c.CommitInterval, StatisticsInterval: c.StatisticsInterval, Registerer: reg, Logger: log},
		// Auth: open here; under auth principals Start sets it, with the
		// credentials key and the principals' Active check.
		objects: objects.Config{NodeID: c.NodeID, Warehouse: c.Warehouse, CacheDir: c.CacheDir, CacheSize: c.CacheSize,
			Auth: auth.ModeNone, Region: catalog.DefaultRegion, Registerer: reg, Logger: c.Logger},
		tail:     tail.Config{Registerer: reg, Logger: log},
		catalog:  catalog.Config{Warehouse: c.Warehouse, AdvertiseURL: c.Advertise, Logger: log},
		admin:    admin.Config{NodeID: c.NodeID, Warehouse: c.Warehouse, Logger: log},
		registry: c.SchemaRegistry,
		auth:     auth.Config{Mode: c.Auth, TokenTTL: c.TokenTTL, CredentialsTTL: c.CredentialsTTL},
	}
}

// validate runs every part's checks, in start order.
func (p plan) validate() error {
	return cmp.Or(p.auth.Validate(), p.postgres.Validate(), p.kafka.Validate(), p.cluster.Validate(), p.indexer.Validate(),
		p.writer.Validate(), p.objects.Validate(), p.catalog.Validate(), p.admin.Validate(), p.registry.Validate())
}

// advertise sets the URL the cluster and the catalog hand out.
func (p *plan) advertise(url string) {
	p.cluster.AdvertiseURL, p.catalog.AdvertiseURL = url, url
}
