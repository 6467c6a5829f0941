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
	"syscall"
	"time"

	"github.com/minkhq/mink/devenv"
	"github.com/minkhq/mink/node"
)

const usage = `mink serves Kafka topics as Apache Iceberg tables, without copying the data.

Usage:
  mink serve  --postgres URL --kafka HOST:PORT[,…] [--listen :8181] [--advertise URL] [--node-id ID]
              [--roles indexer,server] [--lease-ttl 30s] [--max-partitions 0]
              [--cache-dir DIR] [--cache-size 10GiB] [--warehouse mink]
              [--index-memory 128MiB] [--memory-limit 1GiB] [--pprof]
  mink dev    [--nodes N] [--kafka HOST:PORT] [--data FILE]
  mink table create NS.NAME --topic T --value-format json [--schema FILE] [--start earliest]
              [--property k=v,…]   (e.g. mink.json.field-matching=case-insensitive)
  mink table list | mink table get NS.NAME | mink table delete NS.NAME
  mink table status NS.NAME   (progress, unknown JSON fields, dead letters)
  mink status [--leases]
  mink scan NS.NAME [--limit 20] [--format table|json|csv] [--columns a,b.c]   (--limit 0: all rows)

Every flag has a MINK_* environment variable (MINK_POSTGRES_URL, MINK_KAFKA_BROKERS,
MINK_LEASE_TTL, …) and a key in an optional YAML file (--config; keys like lease_ttl).
Admin commands take --admin URL (default http://127.0.0.1:8181, MINK_ADMIN).
`

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
	case "status":
		err = status(ctx, args[1:], stdout)
	case "scan":
		err = scan(ctx, args[1:], stdout, stderr)
	case "help", "-h", "--help":
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

func serve(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	var cfg node.Config
	var kafkaBrokers, roles listFlag
	cacheSize := bytesFlag(10 << 30)
	rangeSize := bytesFlag(16 << 20)
	indexMemory := bytesFlag(128 << 20)
	memoryLimit := bytesFlag(1 << 30)
	fs.StringVar(&cfg.PostgresURL, "postgres", "", "PostgreSQL URL (required)")
	fs.Var(&kafkaBrokers, "kafka", "Kafka seed brokers HOST:PORT[,…] (required)")
	fs.StringVar(&cfg.Listen, "listen", ":8181", "HTTP listen address")
	fs.StringVar(&cfg.Advertise, "advertise", "", "URL other nodes and clients reach this node at (default http://127.0.0.1:PORT)")
	fs.StringVar(&cfg.NodeID, "node-id", "", "node id (default hostname + random suffix)")
	fs.Var(&roles, "roles", "roles: indexer,server (default both; docs/design.md §1)")
	fs.DurationVar(&cfg.LeaseTTL, "lease-ttl", 30*time.Second, "lease_ttl: node and lease expiry; renewals every lease_ttl/3 (docs/design.md §3.1)")
	fs.IntVar(&cfg.MaxPartitions, "max-partitions", 0, "max_partitions: cap on partition leases this node holds, 0 = none (docs/design.md §3.3)")
	fs.StringVar(&cfg.CacheDir, "cache-dir", "", "data file cache directory (default under the temp dir)")
	fs.Var(&cacheSize, "cache-size", "data file cache size, e.g. 10GiB")
	fs.StringVar(&cfg.Warehouse, "warehouse", "mink", "warehouse (S3 bucket) name")
	fs.DurationVar(&cfg.FlushInterval, "flush-interval", 2*time.Second, "cut an indexed range this long after its first record (docs/design.md §4.3)")
	fs.Var(&rangeSize, "range-size", "cut an indexed range at this many record bytes, e.g. 16MiB (docs/design.md §4.3)")
	fs.DurationVar(&cfg.CommitInterval, "commit-interval", 2*time.Second, "writer commit period (docs/design.md §4.6)")
	fs.Var(&indexMemory, "index-memory", "records all indexers of this node hold before cutting ranges early, e.g. 128MiB")
	fs.Var(&memoryLimit, "memory-limit", "Go soft memory limit of the process, e.g. 1GiB; 0 = none (GOMEMLIMIT, when set, wins)")
	pprof := fs.Bool("pprof", false, "serve Go's profiles at /debug/pprof/ on the listen address")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	if err := parse(fs, args); err != nil {
		return err
	}
	switch {
	case cfg.PostgresURL == "":
		return usagef("--postgres is required (or MINK_POSTGRES_URL)")
	case len(kafkaBrokers) == 0:
		return usagef("--kafka is required (or MINK_KAFKA_BROKERS)")
	case cfg.LeaseTTL <= 0:
		return usagef("--lease-ttl must be positive, not %s", cfg.LeaseTTL)
	case cfg.MaxPartitions < 0:
		return usagef("--max-partitions must be 0 (no cap) or more, not %d", cfg.MaxPartitions)
	case cfg.FlushInterval <= 0:
		return usagef("--flush-interval must be positive, not %s", cfg.FlushInterval)
	case cfg.CommitInterval <= 0:
		return usagef("--commit-interval must be positive, not %s", cfg.CommitInterval)
	case cacheSize <= 0:
		return usagef("--cache-size must be positive, not %d", cacheSize)
	case rangeSize <= 0:
		return usagef("--range-size must be positive, not %d", rangeSize)
	case indexMemory <= 0:
		return usagef("--index-memory must be positive, not %d", indexMemory)
	}
	for _, r := range roles {
		if r != "indexer" && r != "server" {
			return usagef("--roles: unknown role %q (roles are indexer, server)", r)
		}
	}
	cfg.KafkaBrokers, cfg.Roles = kafkaBrokers, roles
	cfg.CacheSize, cfg.RangeSize, cfg.IndexMemory = int64(cacheSize), int64(rangeSize), int64(indexMemory)
	cfg.Pprof = *pprof
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

func dev(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("dev", flag.ContinueOnError)
	var cfg devenv.DevConfig
	var kafkaBrokers listFlag
	fs.IntVar(&cfg.Nodes, "nodes", 1, "number of Mink nodes to run")
	fs.Var(&kafkaBrokers, "kafka", "use this Kafka instead of the in-process one")
	fs.IntVar(&cfg.BasePort, "port", 8181, "HTTP port of the first node (node i listens on port+i)")
	fs.StringVar(&cfg.DataFile, "data", "", "USGS GeoJSON feed to produce (default ../shared/data/"+devenv.USGSFile+")")
	logLevel := fs.String("log-level", "warn", "debug, info, warn or error")
	if err := parse(fs, args); err != nil {
		return err
	}
	if cfg.Nodes < 1 {
		return usagef("--nodes must be 1 or more, not %d", cfg.Nodes)
	}
	if cfg.BasePort < 1 || cfg.BasePort+cfg.Nodes-1 > 65535 {
		return usagef("--port must leave a port in 1–65535 for each of the %d nodes, not %d", cfg.Nodes, cfg.BasePort)
	}
	cfg.Kafka = kafkaBrokers
	log, err := logger(stderr, *logLevel)
	if err != nil {
		return err
	}
	cfg.Logger = log
	cfg.Out = stdout
	cfg.Command = os.Args[0]
	return devenv.Dev(ctx, cfg)
}
