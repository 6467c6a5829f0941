// Package cli is the `mink` command line (docs/design.md §5): serve, dev, and the
// admin commands that call a node's admin API.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/minkhq/mink/auth"
	"github.com/minkhq/mink/cluster"
	"github.com/minkhq/mink/devenv"
	"github.com/minkhq/mink/indexer"
	"github.com/minkhq/mink/internal/settings"
	"github.com/minkhq/mink/kafka"
	"github.com/minkhq/mink/node"
	"github.com/minkhq/mink/objects"
	"github.com/minkhq/mink/schemas"
	"github.com/minkhq/mink/tables"
	"github.com/minkhq/mink/writer"
)

var usage = fmt.Sprintf(`mink serves Kafka topics as Apache Iceberg tables, without copying the data.

Usage:
  mink serve  --postgres URL --kafka HOST:PORT[,…] [--listen %s] [--advertise URL] [--node-id ID]
              [--tls-cert FILE --tls-key FILE] [--tls-ca FILE]
              [--roles indexer,server] [--lease-ttl %s] [--max-partitions 0]
              [--cache-dir DIR] [--cache-size %s] [--warehouse %s]
              [--index-memory %s] [--memory-limit %s] [--pprof]
              [--schema-registry URL [--schema-registry-user U --schema-registry-password P
               | --schema-registry-token T] [--schema-registry-ca FILE]
               [--schema-registry-cert FILE --schema-registry-key FILE]]
              [--kafka-tls] [--kafka-tls-ca FILE] [--kafka-tls-cert FILE --kafka-tls-key FILE]
              [--kafka-tls-server-name NAME] [--kafka-sasl-mechanism plain|scram-sha-256|scram-sha-512
               |oauthbearer|aws-msk-iam] [--kafka-sasl-username U --kafka-sasl-password P]
              [--kafka-sasl-token-file FILE | --kafka-sasl-oauth-token-url URL
               --kafka-sasl-oauth-client-id ID --kafka-sasl-oauth-client-secret S [--kafka-sasl-oauth-scopes a,b]]
              [--auth principals|none] [--token-ttl 1h] [--credentials-ttl 1h]
  mink dev    [--nodes N] [--kafka HOST:PORT [--kafka-tls… --kafka-sasl…]] [--schema-registry URL] [--data FILE]
              [--auth principals|none]
  mink principal create NAME --grant 'NS.*' [--grant NS.TABLE …] [--admin] --postgres URL
  mink principal list | mink principal revoke NAME   (mink help principal)
  mink table create NS.NAME --topic T --value-format json [--schema FILE] [--start earliest]
              [--property k=v,…]   (e.g. mink.json.field-matching=case-insensitive)
  mink table list | mink table get NS.NAME | mink table delete NS.NAME
  mink table status NS.NAME   (progress, unknown JSON fields, dead letters, history and tags)
  mink table alter NS.NAME --schema FILE | mink table repair NS.NAME   (mink help table)
  mink table properties NS.NAME --set k=v --remove k   (e.g. --set mink.group-tags=billing,etl-*)
  mink status [--leases]   (the facts the web console /ui shows: nodes and their leases; per table
              partitions, files, last commit, schema versions, dead letters)
  mink scan NS.NAME [--limit 20] [--format table|json|csv] [--columns a,b.c]   (--limit 0: all rows)
              [--snapshot-id ID | --ref NAME | --as-of TIME]   (an older snapshot: by id, branch or tag
              such as group.billing, or the one current at an RFC 3339 time or Unix milliseconds)

Every flag has a MINK_* environment variable (MINK_POSTGRES_URL, MINK_KAFKA_BROKERS,
MINK_LEASE_TTL, MINK_KAFKA_SASL_PASSWORD, …) and a key in an optional YAML file (--config;
keys like lease_ttl, kafka_sasl: {mechanism, …}). PostgreSQL over TLS: sslmode=verify-full
and sslrootcert=FILE (sslcert, sslkey) in the --postgres URL.
Admin commands and scan take --admin URL (default http://127.0.0.1:8181, MINK_ADMIN) and
--credential CLIENT_ID:SECRET (MINK_CREDENTIAL; default: the one mink dev wrote for that node).
`, node.DefaultListen, cluster.DefaultLeaseTTL, sizeString(objects.DefaultCacheSize), tables.DefaultWarehouse,
	sizeString(indexer.DefaultMemoryBudget), sizeString(defaultMemoryLimit))

// Main runs the command line and returns the process exit code: 0, 1 when
// the command failed, 2 for a mistake in the command line (then stderr has
// the error and a pointer to `mink help`, not the whole usage).
func Main(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cmd := args[0]
	var err error
	switch cmd {
	case "serve":
		err = serve(ctx, args[1:], stderr)
	case "dev":
		err = dev(ctx, args[1:], stdout, stderr)
	case "table":
		if len(args) > 1 {
			cmd += " " + args[1]
		}
		err = tableCmd(ctx, args[1:], stdout)
	case "principal":
		if len(args) > 1 {
			cmd += " " + args[1]
		}
		err = principalCmd(ctx, args[1:], stdout)
	case "status":
		err = status(ctx, args[1:], stdout)
	case "scan":
		err = scan(ctx, args[1:], stdout, stderr)
	case "help", "-h", "--help":
		if len(args) > 1 && args[1] != "help" && !strings.HasPrefix(args[1], "-") {
			// `mink help serve` is `mink serve -h`: that command's flags.
			return Main([]string{args[1], "-h"}, stdout, stderr)
		}
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "mink: unknown command %q\n%s\n", cmd, helpHint)
		return 2
	}
	var help helpRequest
	var ue usageError
	switch {
	case errors.As(err, &help):
		fmt.Fprintf(stdout, "Flags of mink %s:\n", cmd)
		help.fs.SetOutput(stdout)
		help.fs.PrintDefaults()
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "mink %s: %v\n%s\n", cmd, err, helpHint)
		return 2
	case err != nil:
		fmt.Fprintf(stderr, "mink %s: %v\n", cmd, err)
		return 1
	}
	return 0
}

// helpHint follows every command line mistake.
const helpHint = "Run 'mink help' for usage."

// usageError is a mistake in the command line: a flag, an argument, or a
// setting from the environment or the --config file.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// helpRequest is -h or --help after a command: Main prints its flags.
type helpRequest struct{ fs *flag.FlagSet }

func (h helpRequest) Error() string     { return flag.ErrHelp.Error() }
func (h helpRequest) Is(err error) bool { return err == flag.ErrHelp }

// logger returns a text logger at level (debug, info, warn or error, as
// slog.Level reads them), or a flag error for another level.
func logger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, usagef("--log-level must be debug, info, warn or error, not %q", level)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})), nil
}

// defaultMemoryLimit is --memory-limit when not given: the process's, not
// a node's, so it lives here.
const defaultMemoryLimit = 1 << 30

func serve(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	var cfg node.Config
	var kafkaBrokers, roles listFlag
	cacheSize := bytesFlag(objects.DefaultCacheSize)
	rangeSize := bytesFlag(indexer.DefaultRangeSize)
	indexMemory := bytesFlag(indexer.DefaultMemoryBudget)
	memoryLimit := bytesFlag(defaultMemoryLimit)
	fs.StringVar(&cfg.PostgresURL, "postgres", "", "PostgreSQL URL (required)")
	fs.Var(&kafkaBrokers, "kafka", "Kafka seed brokers HOST:PORT[,…] (required)")
	fs.StringVar(&cfg.Listen, "listen", node.DefaultListen, "HTTP address of the catalog, S3 and admin APIs")
	fs.StringVar(&cfg.Advertise, "advertise", "", "URL other nodes and clients reach this node at (default http://127.0.0.1:PORT, https:// with --tls-cert)")
	fs.StringVar(&cfg.TLSCert, "tls-cert", "",
		"PEM file of this node's certificate (chain): the listener serves HTTPS only; read again when it changes (sets tls_cert; needs --tls-key)")
	fs.StringVar(&cfg.TLSKey, "tls-key", "", "PEM file of the private key of --tls-cert (sets tls_key)")
	fs.StringVar(&cfg.TLSCA, "tls-ca", "",
		"PEM file of the CA certificates nodes verify each other's https with when forwarding, added to the system's (sets tls_ca)")
	fs.StringVar(&cfg.NodeID, "node-id", "", "node id, unique in the cluster (default hostname + random suffix)")
	fs.Var(&roles, "roles", "what this node does: indexer (indexes partitions, commits snapshots), server (serves data files); default both")
	fs.DurationVar(&cfg.LeaseTTL, "lease-ttl", cluster.DefaultLeaseTTL,
		"a node or lease not renewed for this long expires and others take its work; nodes renew every third of it (sets lease_ttl)")
	fs.IntVar(&cfg.MaxPartitions, "max-partitions", 0,
		"most partition leases this node indexes, across all tables; 0 = no cap (sets max_partitions)")
	fs.StringVar(&cfg.CacheDir, "cache-dir", "", "data file cache directory (default mink-cache-NODE_ID under the temp dir)")
	fs.Var(&cacheSize, "cache-size", "bytes of data files this node keeps in its cache, e.g. 10GiB (sets cache_size)")
	fs.StringVar(&cfg.Warehouse, "warehouse", tables.DefaultWarehouse, "warehouse: the S3 bucket name of every table location")
	fs.DurationVar(&cfg.FlushInterval, "flush-interval", indexer.DefaultFlushInterval,
		"an indexed range is cut this long after its first record, however small (sets flush_interval)")
	fs.Var(&rangeSize, "range-size", "an indexed range is cut once its records reach this many bytes, e.g. 16MiB (sets range_size)")
	fs.DurationVar(&cfg.CommitInterval, "commit-interval", writer.DefaultCommitInterval,
		"how often a table's writer commits newly indexed ranges as a snapshot (sets commit_interval)")
	fs.Var(&indexMemory, "index-memory", "bytes of records all indexers of this node hold before cutting ranges early, e.g. 128MiB (sets index_memory)")
	fs.Var(&memoryLimit, "memory-limit", "Go soft memory limit of the process, e.g. 1GiB; 0 = none (GOMEMLIMIT, when set, wins)")
	pprof := fs.Bool("pprof", false, "serve Go's profiles at /debug/pprof/ on the listen address")
	fs.StringVar(&cfg.MetricsToken, "metrics-token", "",
		"bearer token /metrics requires (its labels name every table); empty: open. Prefer MINK_METRICS_TOKEN, as flags show in ps (sets metrics_token)")
	registryFlags(fs, &cfg.SchemaRegistry)
	kafkaFlags(fs, &cfg.KafkaTLS, &cfg.KafkaSASL)
	authMode := fs.String("auth", string(auth.DefaultMode),
		"principals: the catalog and admin API need principals' tokens (mink principal create), the S3 API vended credentials; "+
			"none: anyone who reaches the node reads every table (sets auth)")
	fs.DurationVar(&cfg.TokenTTL, "token-ttl", auth.DefaultTokenTTL, "lifetime of the catalog's bearer tokens, 1m to 24h (sets token_ttl)")
	fs.DurationVar(&cfg.CredentialsTTL, "credentials-ttl", auth.DefaultCredentialsTTL,
		"lifetime of the S3 credentials a table load vends, 2m to 12h (sets credentials_ttl)")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	if err := parse(fs, args); err != nil {
		return err
	}
	cfg.Auth = auth.Mode(*authMode)
	cfg.KafkaBrokers, cfg.Roles = kafkaBrokers, roles
	cfg.CacheSize, cfg.RangeSize, cfg.IndexMemory = int64(cacheSize), int64(rangeSize), int64(indexMemory)
	cfg.Pprof = *pprof
	if err := positive(fs, "lease-ttl", "flush-interval", "commit-interval", "cache-size", "range-size", "index-memory",
		"token-ttl", "credentials-ttl"); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return settingError(fs, err)
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set && memoryLimit > 0 {
		debug.SetMemoryLimit(int64(memoryLimit))
	}
	log, err := logger(stderr, *logLevel)
	if err != nil {
		return err
	}
	cfg.Logger = log
	n, err := node.Start(ctx, cfg)
	if err != nil {
		return err
	}
	select {
	case <-ctx.Done():
	case <-n.Done():
	}
	n.Stop()
	return nil
}

// registryFlags are the flags of the Schema Registry (YAML key
// schema_registry: {url, username, password, token, ca_file, cert_file,
// key_file}).
func registryFlags(fs *flag.FlagSet, cfg *schemas.RegistryConfig) {
	fs.StringVar(&cfg.URL, "schema-registry", "",
		"Schema Registry URL http(s)://host[:port][/path] for the avro, protobuf and json-schema formats; user:password@ in it is basic auth (sets schema_registry.url)")
	fs.StringVar(&cfg.Username, "schema-registry-user", "", "Schema Registry basic auth user (sets schema_registry.username)")
	fs.StringVar(&cfg.Password, "schema-registry-password", "", "Schema Registry basic auth password; prefer MINK_SCHEMA_REGISTRY_PASSWORD, as flags show in ps (sets schema_registry.password)")
	fs.StringVar(&cfg.Token, "schema-registry-token", "", "Schema Registry bearer token, instead of basic auth; prefer MINK_SCHEMA_REGISTRY_TOKEN (sets schema_registry.token)")
	fs.StringVar(&cfg.CAFile, "schema-registry-ca", "",
		"PEM file of the CA certificates the registry's https certificate is checked against, instead of the system's (sets schema_registry.ca_file)")
	fs.StringVar(&cfg.CertFile, "schema-registry-cert", "", "PEM client certificate for a registry that requires one, with --schema-registry-key (sets schema_registry.cert_file)")
	fs.StringVar(&cfg.KeyFile, "schema-registry-key", "", "PEM key of --schema-registry-cert (sets schema_registry.key_file)")
}

// kafkaFlags are the flags of the Kafka connection's TLS and SASL (YAML
// keys kafka_tls: {enabled, ca_file, cert_file, key_file, server_name}
// and kafka_sasl: {mechanism, username, password, token_file,
// oauth_token_url, oauth_client_id, oauth_client_secret, oauth_scopes}).
func kafkaFlags(fs *flag.FlagSet, tls *kafka.TLS, sasl *kafka.SASL) {
	fs.BoolVar(&tls.Enabled, "kafka-tls", false, "connect to Kafka over TLS, the brokers' certificates checked against the system's roots or --kafka-tls-ca (sets kafka_tls.enabled)")
	fs.StringVar(&tls.CAFile, "kafka-tls-ca", "", "PEM file of the CA certificates the brokers' certificates are checked against; implies --kafka-tls (sets kafka_tls.ca_file)")
	fs.StringVar(&tls.CertFile, "kafka-tls-cert", "", "PEM client certificate for brokers that require one, with --kafka-tls-key; implies --kafka-tls (sets kafka_tls.cert_file)")
	fs.StringVar(&tls.KeyFile, "kafka-tls-key", "", "PEM key of --kafka-tls-cert (sets kafka_tls.key_file)")
	fs.StringVar(&tls.ServerName, "kafka-tls-server-name", "", "name every broker's certificate must carry (default: the host dialed); implies --kafka-tls (sets kafka_tls.server_name)")
	fs.StringVar(&sasl.Mechanism, "kafka-sasl-mechanism", "", "SASL mechanism: plain, scram-sha-256, scram-sha-512, oauthbearer or aws-msk-iam (credentials from AWS's standard variables, profile or role) (sets kafka_sasl.mechanism)")
	fs.StringVar(&sasl.Username, "kafka-sasl-username", "", "SASL user of plain and scram (sets kafka_sasl.username)")
	fs.StringVar(&sasl.Password, "kafka-sasl-password", "", "SASL password of plain and scram; prefer MINK_KAFKA_SASL_PASSWORD, as flags show in ps (sets kafka_sasl.password)")
	fs.StringVar(&sasl.TokenFile, "kafka-sasl-token-file", "", "oauthbearer: file holding the token, read again at every authentication (sets kafka_sasl.token_file)")
	fs.StringVar(&sasl.OAuthTokenURL, "kafka-sasl-oauth-token-url", "", "oauthbearer: OAuth2 token endpoint of the client-credentials flow, https (sets kafka_sasl.oauth_token_url)")
	fs.StringVar(&sasl.OAuthClientID, "kafka-sasl-oauth-client-id", "", "oauthbearer: OAuth2 client id (sets kafka_sasl.oauth_client_id)")
	fs.StringVar(&sasl.OAuthClientSecret, "kafka-sasl-oauth-client-secret", "", "oauthbearer: OAuth2 client secret; prefer MINK_KAFKA_SASL_OAUTH_CLIENT_SECRET (sets kafka_sasl.oauth_client_secret)")
	fs.Var((*listFlag)(&sasl.OAuthScopes), "kafka-sasl-oauth-scopes", "oauthbearer: OAuth2 scopes to ask for, a,b,… (sets kafka_sasl.oauth_scopes)")
}

// positive rejects 0 for the named flags. Each flag's default is in its
// help, so 0 given in the command line, a MINK_* variable or the file
// means 0, which these settings cannot be (in the Go configs, 0 means the
// default). Negative values are left to the configs' Validate.
func positive(fs *flag.FlagSet, names ...string) error {
	for _, name := range names {
		if v := fs.Lookup(name).Value.String(); v == "0" || v == "0s" {
			return usagef("--%s must be positive, not %s", name, v)
		}
	}
	return nil
}

// settingError is a usageError naming the flag of the setting a config's
// Validate rejected (lease_ttl → --lease-ttl), and for a missing one its
// variable too.
func settingError(fs *flag.FlagSet, err error) error {
	var se *settings.Error
	if errors.As(err, &se) {
		if name := flagName(se.Key); name != "" && fs.Lookup(name) != nil {
			if se.Problem == settings.Missing {
				return usagef("--%s %s (or %s)", name, se.Problem, envName(name))
			}
			return usagef("--%s %s", name, se.Problem)
		}
	}
	return usageError{err}
}

func dev(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("dev", flag.ContinueOnError)
	var cfg devenv.DevConfig
	var kafkaBrokers listFlag
	fs.IntVar(&cfg.Nodes, "nodes", devenv.DefaultNodes, "number of Mink nodes to run")
	fs.Var(&kafkaBrokers, "kafka", "use this Kafka instead of the in-process one")
	kafkaFlags(fs, &cfg.KafkaTLS, &cfg.KafkaSASL)
	fs.StringVar(&cfg.SchemaRegistry, "schema-registry", "", "use this Schema Registry (no auth) instead of the in-process one")
	fs.IntVar(&cfg.BasePort, "port", devenv.DefaultBasePort, "HTTP port of the first node (node i listens on port+i)")
	fs.StringVar(&cfg.DataFile, "data", "", "USGS GeoJSON feed to produce (default ../shared/data/"+devenv.USGSFile+")")
	authMode := fs.String("auth", string(auth.ModePrincipals),
		"principals: an admin and a reader principal are made and their credentials printed; none: no access control")
	logLevel := fs.String("log-level", "warn", "debug, info, warn or error")
	if err := parse(fs, args); err != nil {
		return err
	}
	switch auth.Mode(*authMode) {
	case auth.ModePrincipals:
		cfg.Principals = true
	case auth.ModeNone:
	default:
		return usagef("--auth must be principals or none, not %q", *authMode)
	}
	if err := positive(fs, "nodes", "port"); err != nil {
		return err
	}
	cfg.Kafka = kafkaBrokers
	if err := cfg.Validate(); err != nil {
		return settingError(fs, err)
	}
	log, err := logger(stderr, *logLevel)
	if err != nil {
		return err
	}
	cfg.Logger = log
	cfg.Out = stdout
	cfg.Command = os.Args[0]
	return devenv.Dev(ctx, cfg)
}
