package schemas

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/minkhq/mink/internal/settings"
	"github.com/minkhq/mink/internal/tlsfiles"
)

// Keys of the registry settings, as `mink serve` reads them from its YAML
// file (schema_registry: {url, username, password, token, ca_file,
// cert_file, key_file}).
// Errors of RegistryConfig.Validate name them.
const (
	KeyURL      = "schema_registry.url"
	KeyUsername = "schema_registry.username"
	KeyPassword = "schema_registry.password"
	KeyToken    = "schema_registry.token"
	KeyCAFile   = "schema_registry.ca_file"
	KeyCertFile = "schema_registry.cert_file"
	KeyKeyFile  = "schema_registry.key_file"
)

// RegistryConfig says how to reach a Confluent-compatible Schema Registry.
// The zero value is no registry.
type RegistryConfig struct {
	// URL is the registry's base URL, http(s)://host[:port][/path]
	// (--schema-registry, MINK_SCHEMA_REGISTRY_URL). It may carry
	// user:password@, which is then its basic auth (never logged). Empty:
	// no registry.
	URL string
	// Username and Password are HTTP basic auth (--schema-registry-user,
	// --schema-registry-password); both or neither.
	Username string
	Password string
	// Token is a bearer token (--schema-registry-token), sent as
	// "Authorization: Bearer <Token>"; not with basic auth.
	Token string
	// CAFile is a PEM file of the certificates that sign the registry's
	// TLS certificate (--schema-registry-ca); only they are trusted. Only
	// with an https URL. Empty: the system's roots.
	CAFile string
	// CertFile and KeyFile are the client certificate and its key, PEM,
	// for a registry that requires one (mutual TLS:
	// --schema-registry-cert, --schema-registry-key). Both or neither;
	// only with an https URL.
	CertFile, KeyFile string
}

// Validate returns a *settings.Error naming the key (KeyURL, …) of the
// first setting that cannot work: a URL that is not
// http(s)://host[:port][/path] (no query or fragment), a Username without
// a Password or the reverse (in the fields or in the URL), basic auth in
// both the URL and the fields, basic auth and a Token together, a CAFile
// that cannot be read or holds no PEM certificate, a CertFile without
// its KeyFile (or the reverse) or a pair that does not load, a CAFile or
// CertFile with an http URL, or any other setting without a URL. An empty config is valid. It
// does not connect.
func (cfg RegistryConfig) Validate() error {
	return settings.Check("schemas", cfg.check())
}

func (cfg RegistryConfig) check() error {
	if cfg.URL == "" {
		for _, s := range []struct{ key, v string }{{KeyUsername, cfg.Username}, {KeyPassword, cfg.Password},
			{KeyToken, cfg.Token}, {KeyCAFile, cfg.CAFile}, {KeyCertFile, cfg.CertFile}, {KeyKeyFile, cfg.KeyFile}} {
			if s.v != "" {
				return settings.Errorf(s.key, "is set but %s is empty (no registry)", KeyURL)
			}
		}
		return nil
	}
	u, err := parseURL(cfg.URL)
	if err != nil {
		return err
	}
	user, pass, basic := cfg.basicAuth(u)
	switch {
	case u.User != nil && (cfg.Username != "" || cfg.Password != ""):
		return settings.Errorf(KeyUsername, "is set and %s carries user:password@ too: give basic auth once", KeyURL)
	case user != "" && pass == "":
		return settings.Errorf(KeyPassword, "is required with a username")
	case user == "" && pass != "":
		return settings.Errorf(KeyUsername, "is required with a password")
	case basic && cfg.Token != "":
		return settings.Errorf(KeyToken, "is set with basic auth: give one of them")
	}
	for _, s := range []struct{ key, v string }{{KeyCAFile, cfg.CAFile}, {KeyCertFile, cfg.CertFile}, {KeyKeyFile, cfg.KeyFile}} {
		if s.v != "" && u.Scheme != "https" {
			return settings.Errorf(s.key, "is set but %s is http, not https", KeyURL)
		}
	}
	if cfg.CAFile != "" {
		if _, err := tlsfiles.CAPool(cfg.CAFile); err != nil {
			return settings.Errorf(KeyCAFile, "%v", err)
		}
	}
	switch {
	case cfg.CertFile != "" && cfg.KeyFile == "":
		return settings.Errorf(KeyKeyFile, "is required with %s", KeyCertFile)
	case cfg.CertFile == "" && cfg.KeyFile != "":
		return settings.Errorf(KeyCertFile, "is required with %s", KeyKeyFile)
	}
	if _, err := tlsfiles.KeyPair(cfg.CertFile, cfg.KeyFile); err != nil {
		return settings.Errorf(KeyCertFile, "and %s: %v", KeyKeyFile, err)
	}
	return nil
}

// parseURL parses a registry URL, or returns a *settings.Error that
// quotes it with any password hidden.
func parseURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		// url.Error quotes the string, password included.
		return nil, settings.Errorf(KeyURL, "is not a URL")
	}
	bad := func(why string) error {
		return settings.Errorf(KeyURL, "%q is not http(s)://host[:port][/path]: %s", u.Redacted(), why)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, bad("the scheme must be http or https")
	case u.Opaque != "" || u.Hostname() == "":
		return nil, bad("no host")
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return nil, bad("it has a query or fragment")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, bad("the port is not 1–65535")
		}
	} else if strings.HasSuffix(u.Host, ":") {
		return nil, bad("empty port")
	}
	return u, nil
}

// basicAuth returns the basic auth credentials, from the URL or the
// fields, and whether any is set.
func (cfg RegistryConfig) basicAuth(u *url.URL) (user, pass string, set bool) {
	if u.User != nil {
		pass, _ = u.User.Password()
		return u.User.Username(), pass, true
	}
	return cfg.Username, cfg.Password, cfg.Username != "" || cfg.Password != ""
}
