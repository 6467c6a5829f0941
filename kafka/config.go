package kafka

import (
	"log/slog"
	"strings"
	"time"

	"github.com/minkhq/mink/internal/settings"
)

// DefaultRequestTimeout is the default of Config.RequestTimeout.
const DefaultRequestTimeout = 10 * time.Second

// Config says how to reach Kafka. Zero fields take the defaults documented
// on each; a negative number is an error (Validate).
type Config struct {
	// Brokers are seed addresses, HOST:PORT (kafka: --kafka,
	// MINK_KAFKA_BROKERS). Required.
	Brokers []string
	// RequestTimeout bounds each metadata or offset request, retries
	// included (franz-go's RetryTimeout). Default DefaultRequestTimeout.
	RequestTimeout time.Duration `setting:"request_timeout"`
	// Logger receives the client's log lines. Nil means slog.Default().
	Logger *slog.Logger
}

// WithDefaults returns cfg with a zero RequestTimeout or Logger set to its
// default.
func (cfg Config) WithDefaults() Config {
	return settings.Defaults(cfg, Config{RequestTimeout: DefaultRequestTimeout, Logger: slog.Default()})
}

// Validate returns a wrapped *settings.Error when Brokers is empty or has
// an address that is not HOST:PORT, or RequestTimeout is negative.
func (cfg Config) Validate() error {
	return settings.Check("kafka", settings.Required("kafka", strings.Join(cfg.Brokers, ",")),
		checkBrokers(cfg.Brokers), settings.Negative(cfg))
}

// checkBrokers: franz-go would take "host" or "host:x" and then fail every
// dial, so a seed must be HOST:PORT with a port from 1 to 65535.
func checkBrokers(brokers []string) error {
	for _, b := range brokers {
		if err := settings.CheckHostPort(b, false); err != nil {
			return settings.Errorf("kafka", "has %q, not a broker address: %v", b, err)
		}
	}
	return nil
}
