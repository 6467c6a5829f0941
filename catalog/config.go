package catalog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// Defaults of [Config].
const (
	DefaultWarehouse       = "mink"
	DefaultRegion          = "us-east-1"
	DefaultAccessKeyID     = "mink"
	DefaultSecretAccessKey = "mink"
	DefaultQueryTimeout    = 5 * time.Second
	DefaultRetryAfter      = 2 * time.Second
)

// Config says how the catalog describes this node to engines. Zero fields
// take the defaults documented on each.
type Config struct {
	// Warehouse is the bucket of every Mink location: table metadata lives at
	// s3://<Warehouse>/<namespace levels joined by '/'>/<table>/metadata/….
	// It must match the warehouse the tables were created with (`--warehouse`).
	// Default "mink".
	Warehouse string

	// AdvertiseURL is this node's base URL as engines reach it (`--advertise`,
	// e.g. "http://mink-0:8181"). It is handed to engines as s3.endpoint: the
	// S3 read API is served by the same listener. Required.
	AdvertiseURL string

	// Region is given to engines as s3.region and client.region. Mink's S3
	// API ignores it, but S3 clients refuse to sign without one. Default
	// "us-east-1".
	Region string

	// AccessKeyID and SecretAccessKey are the static credentials that the S3
	// API accepts, handed to engines in every LoadTableResult (never in the
	// catalog-wide defaults). Defaults "mink" and "mink".
	AccessKeyID     string
	SecretAccessKey string

	// QueryTimeout bounds each request's use of Postgres, connecting
	// included, so that an unreachable database answers 503 instead of
	// holding the engine's request (docs/design.md §3.4). Default 5s.
	QueryTimeout time.Duration

	// RetryAfter is the Retry-After of a 503 answer, rounded up to whole
	// seconds. Default 2s.
	RetryAfter time.Duration

	// Logger receives request errors, with the namespace and table they
	// concern. Default slog.Default().
	Logger *slog.Logger

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

var warehouseName = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// withDefaults returns cfg with its zero fields set to their defaults and
// checks the result.
func (cfg Config) withDefaults() (Config, error) {
	if cfg.Warehouse == "" {
		cfg.Warehouse = DefaultWarehouse
	}
	if cfg.Region == "" {
		cfg.Region = DefaultRegion
	}
	if cfg.AccessKeyID == "" {
		cfg.AccessKeyID = DefaultAccessKeyID
	}
	if cfg.SecretAccessKey == "" {
		cfg.SecretAccessKey = DefaultSecretAccessKey
	}
	if cfg.QueryTimeout == 0 {
		cfg.QueryTimeout = DefaultQueryTimeout
	}
	if cfg.RetryAfter == 0 {
		cfg.RetryAfter = DefaultRetryAfter
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Loader == nil {
		cfg.Loader = committedLoader{}
	}

	if !warehouseName.MatchString(cfg.Warehouse) {
		return cfg, fmt.Errorf("catalog: warehouse %q is not a bucket name ([A-Za-z0-9._-]+)", cfg.Warehouse)
	}
	if cfg.AdvertiseURL == "" {
		return cfg, errors.New("catalog: the advertised URL is required (it is the engines' s3.endpoint)")
	}
	u, err := url.Parse(cfg.AdvertiseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return cfg, fmt.Errorf("catalog: advertised URL %q is not an absolute http(s) URL", cfg.AdvertiseURL)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return cfg, fmt.Errorf("catalog: advertised URL %q has a query or fragment", cfg.AdvertiseURL)
	}
	cfg.AdvertiseURL = strings.TrimRight(cfg.AdvertiseURL, "/")
	if cfg.QueryTimeout < 0 {
		return cfg, fmt.Errorf("catalog: query timeout %v is negative", cfg.QueryTimeout)
	}
	if cfg.RetryAfter < 0 {
		return cfg, fmt.Errorf("catalog: retry-after %v is negative", cfg.RetryAfter)
	}
	return cfg, nil
}
