package pgstore

import (
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/minkhq/mink/internal/settings"
)

// Defaults of [Config].
const (
	DefaultMaxConns                 = 10
	DefaultIdleInTransactionTimeout = 10 * time.Second
)

// Config says how to reach PostgreSQL. Zero fields take the defaults
// documented on each; a negative number is an error (Validate).
type Config struct {
	// URL is a libpq connection string or postgres:// URL (postgres:
	// --postgres, MINK_POSTGRES_URL); empty, libpq's PG* variables decide.
	URL string
	// Schema, when set, is created if missing and used as search_path, so
	// that tests and several deployments can share one database.
	Schema string
	// MaxConns caps the pool. Default DefaultMaxConns.
	MaxConns int32 `setting:"max_conns"`
	// IdleInTransactionTimeout is Postgres's
	// idle_in_transaction_session_timeout for the pool's sessions: a
	// session left idle inside a transaction this long is ended by the
	// server. A paused or partitioned node may otherwise keep a lease row
	// locked FOR SHARE (the fencing check) and so block every takeover of
	// that lease. Default DefaultIdleInTransactionTimeout; a URL that sets
	// the parameter wins.
	IdleInTransactionTimeout time.Duration `setting:"idle_in_transaction_timeout"`
}

// WithDefaults returns cfg with a zero MaxConns or IdleInTransactionTimeout
// set to its default.
func (cfg Config) WithDefaults() Config {
	return settings.Defaults(cfg, Config{MaxConns: DefaultMaxConns, IdleInTransactionTimeout: DefaultIdleInTransactionTimeout})
}

// Validate returns a wrapped *settings.Error for a URL pgx cannot parse
// (key postgres) or a negative MaxConns or IdleInTransactionTimeout. It
// does not connect.
func (cfg Config) Validate() error {
	return settings.Check("pgstore", checkURL(cfg.URL), settings.Negative(cfg))
}

// checkURL parses a non-empty URL as pgxpool would: a string it cannot
// parse would otherwise fail every connection attempt, forever.
func checkURL(url string) error {
	if url == "" {
		return nil
	}
	if _, err := pgxpool.ParseConfig(url); err != nil {
		// pgconn's message quotes the string with its password hidden.
		return settings.Errorf("postgres", "is not a PostgreSQL URL or connection string: %v", err)
	}
	return nil
}
