package catalog

import (
	"context"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/minkhq/mink/auth"
	"github.com/minkhq/mink/internal/settings"
	"github.com/minkhq/mink/tables"
)

// Defaults of [Config].
const (
	DefaultRegion          = "us-east-1"
	DefaultAccessKeyID     = "mink"
	DefaultSecretAccessKey = "mink"
	DefaultQueryTimeout    = 5 * time.Second
	DefaultRetryAfter      = 2 * time.Second
	DefaultPlanTaskFiles   = 1000
)

// Config says how the catalog describes this node to engines. Zero fields
// take the defaults documented on each.
type Config struct {
	// Warehouse is the bucket of every Mink location: table metadata lives at
	// s3://<Warehouse>/<namespace levels joined by '/'>/<table>/metadata/….
	// It must match the warehouse the tables were created with (`--warehouse`;
	// the rule is tables.CheckWarehouse). Default tables.DefaultWarehouse.
	Warehouse string

	// AdvertiseURL is this node's base URL as engines reach it (`--advertise`,
	// e.g. "http://mink-0:8181"). It is handed to engines as s3.endpoint: the
	// S3 read API is served by the same listener. Required.
	AdvertiseURL string

	// Region is given to engines as s3.region and client.region. Mink's S3
	// API ignores it, but S3 clients refuse to sign without one. Default
	// DefaultRegion.
	Region string

	// AccessKeyID and SecretAccessKey are the static credentials handed to
	// engines in every LoadTableResult under auth none (never in the
	// catalog-wide defaults; under Auth, vended ones replace them). The S3
	// API of a node under auth none checks no signature. Defaults
	// DefaultAccessKeyID and DefaultSecretAccessKey.
	AccessKeyID     string
	SecretAccessKey string

	// QueryTimeout bounds each request's use of Postgres, connecting
	// included, so that an unreachable database answers 503 instead of
	// holding the engine's request (docs/design.md §3.4). Default
	// DefaultQueryTimeout.
	QueryTimeout time.Duration `setting:"query_timeout"`

	// RetryAfter is the Retry-After of a 503 answer, rounded up to whole
	// seconds. Default DefaultRetryAfter.
	RetryAfter time.Duration `setting:"retry_after"`

	// PlanTaskFiles is the most data files one answer of server-side scan
	// planning lists: a plan with more is answered as plan tasks of this
	// many files each, which the client fetches (the spec's
	// fetchScanTasks), in parallel. Default DefaultPlanTaskFiles.
	PlanTaskFiles int `setting:"plan_task_files"`

	// Logger receives request errors, with the namespace and table they
	// concern. Nil means slog.Default().
	Logger *slog.Logger

	// Auth, when set (auth principals, docs/design.md §5), makes every
	// route but POST /v1/oauth/tokens (which it serves) need a bearer
	// token, shows a principal only the tables of its grants, and vends
	// each table load S3 credentials for that table instead of the static
	// AccessKeyID and SecretAccessKey. Nil: auth none, everyone reads
	// everything.
	Auth *auth.Authenticator

	// Loader chooses the metadata a table load returns, given the committed
	// one. It is the hook for the zero-lag tail (docs/design.md §4.4). Default: the
	// committed metadata, unchanged.
	Loader Loader
}

// Table is the metadata a table load returns.
type Table struct {
	// ID is the table's row id in the tables table.
	ID int64
	// Namespace holds the namespace's levels; Name the table's name (a
	// dead-letter table's ends in "~dlq").
	Namespace []string
	Name      string
	// MetadataLocation is the full location of the metadata JSON,
	// s3://<warehouse>/<ns>/<table>/metadata/<file>.metadata.json.
	MetadataLocation string
	// Metadata is the metadata JSON, sent to the engine verbatim.
	Metadata []byte
	// Location is the table's location, s3://<warehouse>/<ns>/<table>, or
	// …/<table>-<uuid hex> for a table created with a deleted one's name
	// (docs/design.md §4.1); DLQLocation its dead-letter table's ("" for
	// a dead-letter table). Vended credentials cover their keys.
	Location, DLQLocation string
}

// A Loader decides which metadata a table load returns. The catalog calls
// it with the table's committed metadata, within the request's context.
//
// A Loader that adds the Kafka tail returns the child snapshot it committed:
// a new MetadataLocation (which changes the load's ETag) and its JSON, both
// already stored where the S3 API finds them. An error that wraps
// [outage.ErrUnavailable] answers 503 with Retry-After (Kafka or Postgres
// cannot be reached, docs/design.md §4.4); any other error answers 500.
type Loader interface {
	LoadTable(ctx context.Context, committed Table) (Table, error)
}

// LoaderFunc adapts a function to [Loader].
type LoaderFunc func(ctx context.Context, committed Table) (Table, error)

// LoadTable calls f.
func (f LoaderFunc) LoadTable(ctx context.Context, committed Table) (Table, error) {
	return f(ctx, committed)
}

// committedLoader is the default Loader: the committed metadata as it is.
type committedLoader struct{}

func (committedLoader) LoadTable(_ context.Context, committed Table) (Table, error) {
	return committed, nil
}

// WithDefaults returns cfg with every zero field but AdvertiseURL set to its
// default, and AdvertiseURL without a trailing '/'.
func (cfg Config) WithDefaults() Config {
	cfg.AdvertiseURL = strings.TrimRight(cfg.AdvertiseURL, "/")
	return settings.Defaults(cfg, Config{Warehouse: tables.DefaultWarehouse, Region: DefaultRegion,
		AccessKeyID: DefaultAccessKeyID, SecretAccessKey: DefaultSecretAccessKey, QueryTimeout: DefaultQueryTimeout,
		RetryAfter: DefaultRetryAfter, PlanTaskFiles: DefaultPlanTaskFiles, Logger: slog.Default(), Loader: committedLoader{}})
}

// Validate returns a wrapped *settings.Error for a warehouse
// tables.CheckWarehouse rejects, a missing or malformed AdvertiseURL, or a
// negative duration.
func (cfg Config) Validate() error {
	return settings.Check("catalog", tables.CheckWarehouse(cfg.WithDefaults().Warehouse),
		checkAdvertise(cfg.AdvertiseURL), settings.Negative(cfg))
}

// checkAdvertise: the advertised URL is the engines' s3.endpoint, so it
// must be an absolute http(s) URL they can append a bucket path to.
func checkAdvertise(advertise string) error {
	if advertise == "" {
		return settings.Errorf("advertise", "is required (it is the engines' s3.endpoint)")
	}
	u, err := url.Parse(advertise)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return settings.Errorf("advertise", "%q is not an absolute http(s) URL", advertise)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return settings.Errorf("advertise", "%q has a query or fragment", advertise)
	}
	return nil
}
