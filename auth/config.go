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

	// MinTokenTTL and MaxTokenTTL bound token_ttl: a shorter token makes
	// clients ask for one nearly every request; a longer one keeps a leaked
	// token usable longer (until it ends or its principal is revoked).
	MinTokenTTL, MaxTokenTTL = time.Minute, 24 * time.Hour
	// MinCredentialsTTL and MaxCredentialsTTL bound credentials_ttl. The
	// vended expiry is now + credentials_ttl rounded down to the minute
	// (Vend), so a lifetime under 2 min could vend credentials that expire
	// within seconds, or already expired; 12 h is the longest session AWS
	// STS grants (AssumeRole's DurationSeconds), the longest an engine
	// expects S3 credentials to live.
	MinCredentialsTTL, MaxCredentialsTTL = 2 * time.Minute, 12 * time.Hour
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
// principals or none, a negative lifetime, token_ttl outside
// [MinTokenTTL, MaxTokenTTL] or credentials_ttl outside
// [MinCredentialsTTL, MaxCredentialsTTL].
func (cfg Config) Validate() error {
	d := cfg.WithDefaults()
	var mode error
	switch d.Mode {
	case ModePrincipals, ModeNone:
	default:
		mode = settings.Errorf("auth", "must be principals or none, not %q", string(d.Mode))
	}
	return settings.Check("auth", mode, settings.Negative(cfg),
		between("token_ttl", d.TokenTTL, MinTokenTTL, MaxTokenTTL),
		between("credentials_ttl", d.CredentialsTTL, MinCredentialsTTL, MaxCredentialsTTL))
}

// between returns an *settings.Error unless lo <= v <= hi.
func between(key string, v, lo, hi time.Duration) error {
	if v < lo || v > hi {
		return settings.Errorf(key, "must be from %v to %v, not %v", lo, hi, v)
	}
	return nil
}
