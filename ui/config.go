package ui

import (
	"log/slog"
	"time"

	"github.com/minkhq/mink/auth"
	"github.com/minkhq/mink/internal/settings"
)

// DefaultRefresh is how often an open page fetches its content again.
const DefaultRefresh = 2 * time.Second

// Config wires the console. Zero fields take the defaults documented on
// each.
type Config struct {
	// NodeID is the node serving the console, named in the page's footer.
	NodeID string
	// Auth, when set (auth principals, docs/design.md §5), makes every page
	// need an admin principal: HTTP Basic with its client id and secret
	// (a browser prompts for them on the 401's Basic challenge) or its
	// bearer token; 401 without, 403 for a principal that is not an
	// admin. Nil: auth none, the console is open.
	Auth *auth.Authenticator
	// Refresh is how often an open page fetches its content again (it
	// swaps it in place, without a reload). Default DefaultRefresh.
	Refresh time.Duration `setting:"ui_refresh"`
	// Logger receives failed reads. Nil means slog.Default().
	Logger *slog.Logger
}

// WithDefaults returns cfg with zero fields set to their defaults.
func (cfg Config) WithDefaults() Config {
	return settings.Defaults(cfg, Config{Refresh: DefaultRefresh, Logger: slog.Default()})
}

// Validate returns a wrapped *settings.Error for a negative Refresh.
func (cfg Config) Validate() error {
	return settings.Check("ui", settings.Negative(cfg))
}
