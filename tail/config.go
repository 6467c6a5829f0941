package tail

import (
	"cmp"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/minkhq/mink/schemas"
)

// Config tunes zero-lag loads. It has no numeric settings: a load's tail
// is cut by the table's content ends and Kafka's offsets alone.
type Config struct {
	// OnBuilt, when set, receives each tail data file a load committed, by
	// key (the node keeps those it owns in its cache).
	OnBuilt func(key string, content []byte)
	// Registerer receives mink_tail_files_total, mink_tail_build_bytes_total,
	// mink_load_snapshots_total and mink_load_commit_conflicts_total. Nil:
	// not registered.
	Registerer prometheus.Registerer
	// Logger receives the loads' log lines. Nil means slog.Default().
	Logger *slog.Logger
	// Schemas keeps the tables' schema versions and registry schemas
	// (docs/design.md §4.7). Nil means a store of its own without a
	// registry.
	Schemas *schemas.Store
}

// WithDefaults returns cfg with a nil Logger set to slog.Default().
func (cfg Config) WithDefaults() Config {
	cfg.Logger = cmp.Or(cfg.Logger, slog.Default())
	return cfg
}
