package writer

import (
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/minkhq/mink/internal/settings"
	"github.com/minkhq/mink/schemas"
)

// Defaults of [Config] (docs/design.md §4.6).
const (
	DefaultCommitInterval         = 2 * time.Second
	DefaultMaxFilesPerCommit      = 10000
	DefaultPartitionCheckInterval = 30 * time.Second
	DefaultCollectAfter           = 10 * time.Minute
	DefaultStatisticsInterval     = 30 * time.Second
)

// Config tunes the writer. Zero fields take the defaults documented on
// each; a negative number is an error (Validate).
type Config struct {
	// CommitInterval is commit_interval: how often new ranges are
	// committed. Default DefaultCommitInterval.
	CommitInterval time.Duration `setting:"commit_interval"`
	// MaxFilesPerCommit caps the data files one snapshot adds. Default
	// DefaultMaxFilesPerCommit.
	MaxFilesPerCommit int `setting:"max_files_per_commit"`
	// PartitionCheckInterval is how often the topic's partition count is
	// compared with the table's leases. Default
	// DefaultPartitionCheckInterval.
	PartitionCheckInterval time.Duration `setting:"partition_check_interval"`
	// CollectAfter is how long after a snapshot expired the rows and
	// metadata files only it referenced are deleted: an engine that loaded
	// the snapshot just before it expired has this long to read it.
	// Default DefaultCollectAfter.
	CollectAfter time.Duration `setting:"collect_after"`
	// StatisticsInterval is how often the writer writes a Puffin
	// statistics file for the table's current snapshot when it has none
	// (docs/design.md §4.6). Default DefaultStatisticsInterval.
	StatisticsInterval time.Duration `setting:"statistics_interval"`
	// Registerer receives mink_commits_total and the fenced-write counter;
	// nil registers nothing.
	Registerer prometheus.Registerer
	// Logger receives the writer's log lines. Nil means slog.Default().
	Logger *slog.Logger
	// Schemas keeps the tables' schema versions and registry schemas
	// (docs/design.md §4.7). Nil means a store of its own without a
	// registry.
	Schemas *schemas.Store
}

// WithDefaults returns cfg with each zero interval, MaxFilesPerCommit or
// Logger set to its default.
func (cfg Config) WithDefaults() Config {
	return settings.Defaults(cfg, Config{CommitInterval: DefaultCommitInterval, MaxFilesPerCommit: DefaultMaxFilesPerCommit,
		PartitionCheckInterval: DefaultPartitionCheckInterval, CollectAfter: DefaultCollectAfter,
		StatisticsInterval: DefaultStatisticsInterval, Logger: slog.Default()})
}

// Validate returns a wrapped *settings.Error for a negative interval or
// MaxFilesPerCommit.
func (cfg Config) Validate() error { return settings.Check("writer", settings.Negative(cfg)) }
