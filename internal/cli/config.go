package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/minkhq/mink/auth"
)

// envAliases are MINK_* names the design fixes that do not follow the
// flag name (docs/design.md §5: MINK_KAFKA_BROKERS for --kafka).
var envAliases = map[string]string{
	"kafka":           "MINK_KAFKA_BROKERS",
	"postgres":        "MINK_POSTGRES_URL",
	"schema-registry": "MINK_SCHEMA_REGISTRY_URL",
}

// yamlGroups are YAML keys that hold a map of settings, each set by its
// own flag: schema_registry: {url: …} is --schema-registry. The dotted
// key (schema_registry.url) is what a config's Validate names. kafka_tls
// may also be a plain boolean (the flag --kafka-tls).
var yamlGroups = map[string]map[string]string{
	"schema_registry": {
		"url":       "schema-registry",
		"username":  "schema-registry-user",
		"password":  "schema-registry-password",
		"token":     "schema-registry-token",
		"ca_file":   "schema-registry-ca",
		"cert_file": "schema-registry-cert",
		"key_file":  "schema-registry-key",
	},
	"kafka_tls": {
		"enabled":     "kafka-tls",
		"ca_file":     "kafka-tls-ca",
		"cert_file":   "kafka-tls-cert",
		"key_file":    "kafka-tls-key",
		"server_name": "kafka-tls-server-name",
	},
	"kafka_sasl": {
		"mechanism":           "kafka-sasl-mechanism",
		"username":            "kafka-sasl-username",
		"password":            "kafka-sasl-password",
		"token_file":          "kafka-sasl-token-file",
		"oauth_token_url":     "kafka-sasl-oauth-token-url",
		"oauth_client_id":     "kafka-sasl-oauth-client-id",
		"oauth_client_secret": "kafka-sasl-oauth-client-secret",
		"oauth_scopes":        "kafka-sasl-oauth-scopes",
	},
}

// flagName is the flag of a setting's key: lease_ttl → lease-ttl,
// schema_registry.username → schema-registry-user.
func flagName(key string) string {
	if group, sub, ok := strings.Cut(key, "."); ok {
		return yamlGroups[group][sub]
	}
	return strings.ReplaceAll(key, "_", "-")
}

// envName is the MINK_* variable of a flag: MINK_ + upper snake case.
func envName(flagName string) string {
	if a, ok := envAliases[flagName]; ok {
		return a
	}
	return "MINK_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// yamlKey is the YAML key of a flag: snake case (lease_ttl, max_partitions).
func yamlKey(flagName string) string { return strings.ReplaceAll(flagName, "-", "_") }

// parse parses args into fs, then fills every flag not given on the
// command line from its MINK_* variable, then from the YAML file named by
// --config (or MINK_CONFIG). Precedence: flag > environment > file.
// Positional arguments (e.g. NS.NAME) may stand before, between or after
// the flags; each is stored in the next of positional, and any more is an
// error.
//
// Every error is a usageError (or a helpRequest for -h): the flag package
// prints nothing itself.
func parse(fs *flag.FlagSet, args []string, positional ...*string) error {
	if err := parseSettings(fs, args, positional...); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return helpRequest{fs}
		}
		return usageError{err}
	}
	// A credential without its ':' would reach the node as no credential
	// at all; say the format here (the value is a secret: not echoed).
	if f := fs.Lookup("credential"); f != nil && f.Value.String() != "" {
		if _, _, ok := auth.BasicCredential(f.Value.String()); !ok {
			return usagef("--credential must be CLIENT_ID:SECRET, as mink principal create prints it")
		}
	}
	return nil
}

func parseSettings(fs *flag.FlagSet, args []string, positional ...*string) error {
	fs.SetOutput(io.Discard)
	config := fs.String("config", "", "optional YAML file of settings (keys: flag names in snake case, e.g. lease_ttl)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	for _, p := range positional {
		if fs.NArg() == 0 {
			break
		}
		*p = fs.Arg(0)
		if err := fs.Parse(fs.Args()[1:]); err != nil {
			return err
		}
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var fileErr error
	fs.VisitAll(func(f *flag.Flag) {
		if _, only := f.Value.(cmdLineOnly); only || set[f.Name] || f.Name == "config" || fileErr != nil {
			return
		}
		if v, ok := os.LookupEnv(envName(f.Name)); ok {
			if err := f.Value.Set(v); err != nil {
				fileErr = fmt.Errorf("%s=%q: %w", envName(f.Name), v, err)
			}
			set[f.Name] = true
		}
	})
	if fileErr != nil {
		return fileErr
	}
	path := *config
	if path == "" {
		path = os.Getenv("MINK_CONFIG")
	}
	if path == "" {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	var values map[string]any
	if err := yaml.Unmarshal(b, &values); err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	known := map[string]*flag.Flag{}
	fs.VisitAll(func(f *flag.Flag) {
		if _, only := f.Value.(cmdLineOnly); !only {
			known[yamlKey(f.Name)] = f
		}
	})
	for group, subs := range yamlGroups {
		m, ok := values[group].(map[string]any)
		if !ok {
			continue
		}
		delete(values, group)
		for sub, v := range m {
			k := group + "." + sub
			if f := fs.Lookup(subs[sub]); f != nil {
				known[k] = f
			}
			values[k] = v
		}
	}
	for k, v := range values {
		f, ok := known[k]
		if !ok {
			return fmt.Errorf("config %s: unknown key %q", path, k)
		}
		if set[f.Name] {
			continue
		}
		if err := f.Value.Set(yamlString(v)); err != nil {
			return fmt.Errorf("config %s: %s: %w", path, k, err)
		}
	}
	return nil
}

func yamlString(v any) string {
	switch x := v.(type) {
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = yamlString(e)
		}
		return strings.Join(parts, ",")
	case string:
		return x
	default:
		return fmt.Sprint(x)
	}
}

// listFlag is a comma-separated list flag.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error {
	*l = nil
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*l = append(*l, p)
		}
	}
	return nil
}

// bytesFlag is a size such as 10GiB, 512MiB, 1000000.
type bytesFlag int64

func (b *bytesFlag) String() string { return sizeString(int64(*b)) }
func (b *bytesFlag) Set(s string) error {
	n, err := parseBytes(s)
	if err != nil {
		return err
	}
	*b = bytesFlag(n)
	return nil
}

// sizeString writes n in the largest binary unit that divides it (10GiB,
// 512MiB, 1000): what parseBytes reads back.
func sizeString(n int64) string {
	for _, u := range []struct {
		suffix string
		shift  uint
	}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}} {
		if n != 0 && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

func parseBytes(s string) (int64, error) {
	s = strings.TrimSpace(s)
	units := []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1}}
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			n, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), 64)
			if err != nil || n < 0 || math.IsInf(n, 0) {
				return 0, fmt.Errorf("bad size %q", s)
			}
			// A size is a whole number of bytes that fits an int64: 1.5B
			// or 9EiB must not become 1 or a wrapped number.
			b := n * float64(u.mult)
			if b != math.Trunc(b) || b >= math.MaxInt64 {
				return 0, fmt.Errorf("bad size %q (not a whole number of bytes up to 2^63-1)", s)
			}
			return int64(b), nil
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("bad size %q (use e.g. 10GiB)", s)
	}
	return n, nil
}
