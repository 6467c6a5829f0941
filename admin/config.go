package admin

import (
	"crypto/tls"
	"log/slog"

	"github.com/minkhq/mink/auth"
	"github.com/minkhq/mink/internal/settings"
	"github.com/minkhq/mink/schemas"
	"github.com/minkhq/mink/tables"
)

// Config wires the admin API. Zero fields take the defaults documented on
// each.
type Config struct {
	// NodeID is this node's id: /admin/v1/nodes/{NodeID}/… is answered
	// here, by Local, instead of being forwarded.
	NodeID string
	// Warehouse is the warehouse tables are created in (their locations
	// are s3://<Warehouse>/…). Default tables.DefaultWarehouse.
	Warehouse string
	// Local answers /admin/v1/nodes/{this node}/<what> (e.g. "cache").
	Local func(what string) (any, bool)
	// Logger receives failed requests and created tables. Nil means
	// slog.Default().
	Logger *slog.Logger
	// Auth, when set (auth principals, docs/design.md §5), makes every
	// route need an admin principal's bearer token: 401 without a valid
	// one, 403 for a principal that is not an admin. Nil: auth none.
	Auth *auth.Authenticator
	// ForwardKey signs the requests this node forwards to the node they
	// name and checks those forwarded here (auth.SignForward,
	// auth.VerifyForward): auth.DeriveKey(secret, auth.PurposeForward). A
	// request marked forwarded (auth.ForwardedHeader) that does not verify
	// answers 403. Empty: forwarded requests go unsigned and unmarked.
	ForwardKey []byte
	// PeerTLS verifies the nodes forwarded to over https (their advertised
	// URL's scheme). Nil: the system's roots.
	PeerTLS *tls.Config
	// Schemas gives registry schemas for tables of registry formats
	// (docs/design.md §4.7). Nil means a store without a registry.
	Schemas *schemas.Store
	// CountBudget is how many retained offsets a registry table's create
	// reads at most to count its records per writer schema (its plan,
	// docs/design.md §4.7); past it the counts are an estimate. Default
	// CountBudget.
	CountBudget int64
}

// WithDefaults returns cfg with a zero Warehouse or Logger set to its
// default.
func (cfg Config) WithDefaults() Config {
	return settings.Defaults(cfg, Config{Warehouse: tables.DefaultWarehouse, Logger: slog.Default(), CountBudget: CountBudget})
}

// Validate returns a wrapped *settings.Error for a warehouse
// tables.CheckWarehouse rejects.
func (cfg Config) Validate() error {
	return settings.Check("admin", tables.CheckWarehouse(cfg.WithDefaults().Warehouse))
}
