package cluster

import (
	"cmp"
	"log/slog"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/minkhq/mink/internal/settings"
)

// Defaults of [Config] (docs/design.md §3.1, §3.2).
const (
	// DefaultLeaseTTL is lease_ttl: a node row or lease not renewed for
	// this long expires.
	DefaultLeaseTTL = 30 * time.Second
	// SafetyMarginDivisor gives the default safety margin, LeaseTTL /
	// SafetyMarginDivisor.
	SafetyMarginDivisor = 6
	// MinLeaseTTL is the shortest lease_ttl: rounds every LeaseTTL/3 need
	// time for their statements.
	MinLeaseTTL = 30 * time.Millisecond
)

// DefaultRoles returns the roles of a node that names none: both.
func DefaultRoles() []string { return []string{RoleIndexer, RoleServer} }

// Config configures one node's membership and lease loop. Zero fields take
// the defaults documented on each; a negative number is an error
// (Validate).
type Config struct {
	// NodeID is this node's id (docs/design.md §1: --node-id). Required.
	NodeID string
	// AdvertiseURL is the base URL other nodes and clients use to reach
	// this node (--advertise), e.g. "http://10.0.0.5:8181".
	AdvertiseURL string
	// Roles is a subset of {indexer, server} (roles). Default DefaultRoles().
	Roles []string
	// LeaseTTL is lease_ttl (docs/design.md §3.1): a node row or lease
	// not renewed for this long expires. The node renews its row and
	// leases every LeaseTTL/3. Default DefaultLeaseTTL; at least
	// MinLeaseTTL.
	LeaseTTL time.Duration `setting:"lease_ttl"`
	// MaxPartitions is max_partitions (docs/design.md §3.3): a cap on the
	// partition leases this node holds across all tables. 0 = no cap.
	MaxPartitions int
	// SafetyMargin is subtracted from the trust window (docs/design.md
	// §3.2), in [0, LeaseTTL/3). Default LeaseTTL/SafetyMarginDivisor.
	SafetyMargin time.Duration
	// Registerer receives the lease metrics (mink_lease_*_total,
	// mink_leases_held, mink_cluster_rounds_total); nil registers nothing.
	Registerer prometheus.Registerer
	// Logger receives the loop's log lines, each with node_id. Nil means
	// slog.Default().
	Logger *slog.Logger
}

// WithDefaults returns cfg with every zero field but NodeID, AdvertiseURL,
// MaxPartitions and Registerer set to its default, and its roles sorted
// without repeats.
func (cfg Config) WithDefaults() Config {
	cfg = settings.Defaults(cfg, Config{Roles: DefaultRoles(), LeaseTTL: DefaultLeaseTTL, Logger: slog.Default()})
	cfg.SafetyMargin = cmp.Or(cfg.SafetyMargin, cfg.LeaseTTL/SafetyMarginDivisor)
	cfg.Roles = slices.Compact(slices.Sorted(slices.Values(cfg.Roles)))
	return cfg
}

// Validate returns a wrapped *settings.Error for a missing NodeID, an
// unknown role, a LeaseTTL below MinLeaseTTL, a SafetyMargin outside [0,
// LeaseTTL/3) or a negative MaxPartitions.
func (cfg Config) Validate() error {
	return settings.Check("cluster", cfg.check())
}

func (cfg Config) check() error {
	if err := cmp.Or(settings.Required("node_id", cfg.NodeID), settings.Negative(cfg)); err != nil {
		return err
	}
	// A node id is shown by mink status in a terminal and in the console:
	// no control characters (an escape sequence or a newline would rewrite
	// what an operator sees), valid UTF-8, at most 255 bytes.
	if len(cfg.NodeID) > 255 || !utf8.ValidString(cfg.NodeID) || strings.ContainsFunc(cfg.NodeID, unicode.IsControl) {
		return settings.Errorf("node_id", "%q must be valid UTF-8 of at most 255 bytes without control characters", cfg.NodeID)
	}
	if cfg.MaxPartitions < 0 {
		return settings.Errorf("max_partitions", "must be 0 (no cap) or more, not %d", cfg.MaxPartitions)
	}
	cfg = cfg.WithDefaults()
	for _, r := range cfg.Roles {
		if r != RoleIndexer && r != RoleServer {
			return settings.Errorf("roles", "has an unknown role %q (roles are %s, %s)", r, RoleIndexer, RoleServer)
		}
	}
	if cfg.LeaseTTL < MinLeaseTTL {
		return settings.Errorf("lease_ttl", "must be at least %s, not %s", MinLeaseTTL, cfg.LeaseTTL)
	}
	// The trust window must outlast the time to the next renewal (one
	// period plus that renewal's timeout), or jobs would stop every round.
	if cfg.SafetyMargin < 0 || cfg.SafetyMargin >= cfg.LeaseTTL/3 {
		return settings.Errorf("safety_margin", "must be in [0, lease_ttl/3 = %s), not %s", cfg.LeaseTTL/3, cfg.SafetyMargin)
	}
	return nil
}
