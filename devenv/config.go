package devenv

import (
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/minkhq/mink/internal/settings"
	"github.com/minkhq/mink/kafka"
	"github.com/minkhq/mink/schemas"
)

// Defaults of [DevConfig]. The nodes' timings are shorter than a
// deployment's, so that a demo shows tables filling and leases moving
// within seconds.
const (
	DefaultNodes          = 1
	DefaultBasePort       = 8181
	DefaultLeaseTTL       = 10 * time.Second
	DefaultFlushInterval  = 500 * time.Millisecond
	DefaultCommitInterval = 500 * time.Millisecond
	// NodeCacheSize is each dev node's data file cache, in bytes.
	NodeCacheSize = 1 << 30
)

// DevConfig configures `mink dev`. Zero fields take the defaults
// documented on each; a negative number is an error (Validate).
type DevConfig struct {
	// Nodes is how many Mink nodes to run in this process (--nodes).
	// Default DefaultNodes.
	Nodes int `setting:"nodes"`
	// BasePort is the first node's HTTP port (--port); node i listens on
	// BasePort+i. Default DefaultBasePort. EphemeralPorts lets the system
	// pick free ports instead.
	BasePort       int
	EphemeralPorts bool
	// LeaseTTL is the nodes' lease_ttl. Default DefaultLeaseTTL (short, so
	// a demo of a stopped node shows its leases moving quickly).
	LeaseTTL time.Duration `setting:"lease_ttl"`
	// FlushInterval and CommitInterval of the nodes. Defaults
	// DefaultFlushInterval and DefaultCommitInterval.
	FlushInterval  time.Duration `setting:"flush_interval"`
	CommitInterval time.Duration `setting:"commit_interval"`
	// StatisticsInterval is the nodes' writer statistics period (0: the
	// writer's default).
	StatisticsInterval time.Duration

	// Kafka, when set, is an existing Kafka to use (--kafka) instead of
	// the in-process one; KafkaTLS and KafkaSASL say how to reach it
	// (--kafka-tls…, --kafka-sasl…, as for `mink serve`).
	Kafka     []string
	KafkaTLS  kafka.TLS
	KafkaSASL kafka.SASL
	// SchemaRegistry, when set, is an existing Schema Registry to use
	// (--schema-registry) instead of the in-process one (franz-go's
	// srfake).
	SchemaRegistry string
	// PostgresURL, when set, is used instead of a throwaway cluster.
	PostgresURL string
	// DataFile is the USGS feed to produce (--data). Default: found by
	// FindData.
	DataFile string

	// Principals runs the nodes under auth principals (`mink dev` does):
	// StartEnv then creates an admin principal (Env.Credential). False
	// runs them under auth none, as the tests that are not about access
	// control do.
	Principals bool

	// Logger receives the nodes' log lines. Nil means slog.Default().
	Logger *slog.Logger
	// Out receives the banner (catalog URI, commands). Default os.Stdout.
	Out io.Writer
	// Command is how the banner names the mink binary. Default "mink".
	Command string
}

// WithDefaults returns cfg with every zero field but Kafka, SchemaRegistry,
// PostgresURL and DataFile (Dev looks for it) set to its default.
func (cfg DevConfig) WithDefaults() DevConfig {
	return settings.Defaults(cfg, DevConfig{Nodes: DefaultNodes, BasePort: DefaultBasePort, LeaseTTL: DefaultLeaseTTL,
		FlushInterval: DefaultFlushInterval, CommitInterval: DefaultCommitInterval, Logger: slog.Default(),
		Out: os.Stdout, Command: "mink"})
}

// Validate returns a wrapped *settings.Error for a negative number of
// nodes or duration, ports outside 1–65535, a SchemaRegistry URL that
// schemas.RegistryConfig refuses, Kafka settings kafka.Config refuses, or
// KafkaTLS or KafkaSASL without Kafka (the in-process Kafka has neither). The nodes' settings are
// checked again, with the others, by node.Start.
func (cfg DevConfig) Validate() error {
	return settings.Check("devenv", cfg.check())
}

func (cfg DevConfig) check() error {
	if err := settings.Negative(cfg); err != nil {
		return err
	}
	if err := (schemas.RegistryConfig{URL: cfg.SchemaRegistry}).Validate(); err != nil {
		return err
	}
	if len(cfg.Kafka) == 0 && (cfg.KafkaTLS.On() || cfg.KafkaSASL.Mechanism != "") {
		return settings.Errorf("kafka", "is required with the kafka_tls and kafka_sasl settings (the in-process Kafka uses neither)")
	}
	if len(cfg.Kafka) > 0 {
		if err := cfg.kafka().Validate(); err != nil {
			return err
		}
	}
	cfg = cfg.WithDefaults()
	if !cfg.EphemeralPorts && (cfg.BasePort < 1 || cfg.BasePort+cfg.Nodes-1 > 65535) {
		return settings.Errorf("port", "must leave a port in 1–65535 for each of the %d nodes, not %d", cfg.Nodes, cfg.BasePort)
	}
	return nil
}

// kafka is the external Kafka's connection.
func (cfg DevConfig) kafka() kafka.Config {
	return kafka.Config{Brokers: cfg.Kafka, TLS: cfg.KafkaTLS, SASL: cfg.KafkaSASL}
}
