package auth

import (
	"time"

	"github.com/minkhq/mink/internal/settings"
)

// Defaults of [Config].
const (
	// DefaultMode: a node never starts open by accident.
	DefaultMode = ModePrincipals
	// DefaultTokenTTL is a bearer token's lifetime; clients ask for a new
	// one before it ends (iceberg-go, PyIceberg and Java do).
	DefaultTokenTTL = time.Hour
	// DefaultCredentialsTTL is vended S3 credentials' lifetime (AWS STS's
	// default session length too).
	DefaultCredentialsTTL = time.Hour
)

// Config is how a node authenticates its callers. Zero fields take the
// defaults documented on each.
type Config struct {
	// Mode is auth: ModePrincipals or ModeNone. Default DefaultMode.
	Mode Mode
	// TokenTTL is token_ttl, a bearer token's lifetime. Default
	// DefaultTokenTTL.
	TokenTTL time.Duration `setting:"token_ttl"`
	// CredentialsTTL is credentials_ttl, vended credentials' lifetime.
	// Default DefaultCredentialsTTL.
	CredentialsTTL time.Duration `setting:"credentials_ttl"`
}

// WithDefaults returns cfg with its zero fields set to their defaults.
func (cfg Config) WithDefaults() Config {
	return settings.Defaults(cfg, Config{Mode: DefaultMode, TokenTTL: DefaultTokenTTL, CredentialsTTL: DefaultCredentialsTTL})
}

// Validate returns a wrapped *settings.Error for a mode other than
// principals or none, or a negative lifetime.
func (cfg Config) Validate() error {
	var mode error
	switch m := cfg.WithDefaults().Mode; m {
	case ModePrincipals, ModeNone:
	default:
		mode = settings.Errorf("auth", "must be principals or none, not %q", string(m))
	}
	return settings.Check("auth", mode, settings.Negative(cfg))
}
