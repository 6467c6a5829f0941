package schemas

import (
	"crypto/x509"
	"encoding/pem"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/minkhq/mink/internal/settings"
)

// Keys of the registry settings, as `mink serve` reads them from its YAML
// file (schema_registry: {url, username, password, token, ca_file}).
// Errors of RegistryConfig.Validate name them.
const (
	KeyURL      = "schema_registry.url"
	KeyUsername = "schema_registry.username"
	KeyPassword = "schema_registry.password"
	KeyToken    = "schema_registry.token"
	KeyCAFile   = "schema_registry.ca_file"
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
}

// Validate returns a *settings.Error naming the key (KeyURL, …) of the
// first setting that cannot work: a URL that is not
// http(s)://host[:port][/path] (no query or fragment), a Username without
// a Password or the reverse (in the fields or in the URL), basic auth in
// both the URL and the fields, basic auth and a Token together, a CAFile
// that cannot be read or holds no PEM certificate, a CAFile with an http
// URL, or any other setting without a URL. An empty config is valid. It
// does not connect.
func (cfg RegistryConfig) Validate() error {
	return settings.Check("schemas", cfg.check())
}

func (cfg RegistryConfig) check() error {
	if cfg.URL == "" {
		for _, s := range []struct{ key, v string }{{KeyUsername, cfg.Username}, {KeyPassword, cfg.Password},
			{KeyToken, cfg.Token}, {KeyCAFile, cfg.CAFile}} {
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
	if cfg.CAFile == "" {
		return nil
	}
	if u.Scheme != "https" {
		return settings.Errorf(KeyCAFile, "is set but %s is http, not https", KeyURL)
	}
	if _, err := readCA(cfg.CAFile); err != nil {
		return settings.Errorf(KeyCAFile, "%v", err)
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

// readCA reads a PEM file of CA certificates into a pool. Errors: the file
// cannot be read, or it holds no certificate Go can parse.
func readCA(path string) (*x509.CertPool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		if block, _ := pem.Decode(b); block == nil {
			return nil, &caError{path, "holds no PEM block"}
		}
		return nil, &caError{path, "holds no PEM certificate (a CERTIFICATE block Go can parse)"}
	}
	return pool, nil
}

type caError struct{ path, problem string }

func (e *caError) Error() string { return e.path + " " + e.problem }
