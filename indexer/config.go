package indexer

import (
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/minkhq/mink/internal/settings"
	"github.com/minkhq/mink/schemas"
)

// Defaults of [Config] (docs/design.md §4.3).
const (
	DefaultFlushInterval = 2 * time.Second
	DefaultRangeSize     = 16 << 20  // 16 MiB
	DefaultMemoryBudget  = 128 << 20 // 128 MiB
)

// Config tunes indexing. Zero fields take the defaults documented on each;
// a negative number is an error (Validate).
type Config struct {
	// FlushInterval is flush_interval: a range is cut this long after its
	// first record even if it is small (docs/design.md §4.3). Default
	// DefaultFlushInterval.
	FlushInterval time.Duration `setting:"flush_interval"`
	// RangeSize is range_size: a range is cut once its records' keys and
	// values reach this many bytes. Default DefaultRangeSize.
	RangeSize int64 `setting:"range_size"`
	// MemoryBudget is index_memory: it bounds the records all partitions
	// of this indexer hold between fetch and range cut, in bytes (keys,
	// values and recordOverhead per record). A partition whose next record
	// would pass it cuts its range early. Default DefaultMemoryBudget.
	// Builds run at most GOMAXPROCS at a time, for the same reason.
	MemoryBudget int64 `setting:"index_memory"`
	// OnBuilt, when set, receives each data file the indexer built, by key,
	// so that a node that owns the file can keep it in its cache.
	OnBuilt func(key string, content []byte)
	// Registerer receives the indexer's metrics; nil registers nothing.
	Registerer prometheus.Registerer
	// Logger receives the indexer's log lines. Nil means slog.Default().
	Logger *slog.Logger
	// Schemas keeps the tables' schema versions and registry schemas
	// (docs/design.md §4.7). Nil means a store of its own without a
	// registry.
	Schemas *schemas.Store
}

// WithDefaults returns cfg with a zero FlushInterval, RangeSize,
// MemoryBudget or Logger set to its default.
func (cfg Config) WithDefaults() Config {
	return settings.Defaults(cfg, Config{FlushInterval: DefaultFlushInterval, RangeSize: DefaultRangeSize,
		MemoryBudget: DefaultMemoryBudget, Logger: slog.Default()})
}

// Validate returns a wrapped *settings.Error for a negative FlushInterval,
// RangeSize or MemoryBudget.
func (cfg Config) Validate() error { return settings.Check("indexer", settings.Negative(cfg)) }
