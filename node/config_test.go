package node

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/auth"
	"github.com/minkhq/mink/catalog"
	"github.com/minkhq/mink/cluster"
	"github.com/minkhq/mink/indexer"
	"github.com/minkhq/mink/internal/settings"
	"github.com/minkhq/mink/objects"
	"github.com/minkhq/mink/schemas"
	"github.com/minkhq/mink/tables"
	"github.com/minkhq/mink/writer"
)

// valid names a Postgres nobody listens on: a Start that got past
// validation would retry it until its context ends.
func valid() Config {
	return Config{PostgresURL: "postgres://mink@127.0.0.1:1/mink", KafkaBrokers: []string{"127.0.0.1:1"}}
}

// A negative number is an error naming its setting, found before Start
// connects to anything.
func TestValidateRejectsNegatives(t *testing.T) {
	for key, set := range map[string]func(*Config){
		"lease_ttl":       func(c *Config) { c.LeaseTTL = -time.Second },
		"max_partitions":  func(c *Config) { c.MaxPartitions = -1 },
		"cache_size":      func(c *Config) { c.CacheSize = -1 },
		"flush_interval":  func(c *Config) { c.FlushInterval = -time.Second },
		"range_size":      func(c *Config) { c.RangeSize = -1 },
		"index_memory":    func(c *Config) { c.IndexMemory = -1 },
		"commit_interval": func(c *Config) { c.CommitInterval = -time.Second },
		"roles":           func(c *Config) { c.Roles = []string{"reader"} },
		"warehouse":       func(c *Config) { c.Warehouse = "a/b" },
		"advertise":       func(c *Config) { c.Advertise = "mink-0:8181" },
		"postgres":        func(c *Config) { c.PostgresURL = "" },
		"kafka":           func(c *Config) { c.KafkaBrokers = nil },
		// Values no retry can fix fail before any connection, too.
		"kafka ":              func(c *Config) { c.KafkaBrokers = []string{"127.0.0.1:1", "nohostport"} },
		"kafka  ":             func(c *Config) { c.KafkaBrokers = []string{"h:notaport"} },
		"postgres ":           func(c *Config) { c.PostgresURL = "not a url" },
		"listen":              func(c *Config) { c.Listen = "bad" },
		"schema_registry.url": func(c *Config) { c.SchemaRegistry.URL = "registry:8081" },
		"schema_registry.password": func(c *Config) {
			c.SchemaRegistry = schemas.RegistryConfig{URL: "http://r:8081", Username: "u"}
		},
		"schema_registry.token": func(c *Config) {
			c.SchemaRegistry = schemas.RegistryConfig{URL: "http://u:p@r:8081", Token: "t"}
		},
		"schema_registry.ca_file": func(c *Config) {
			c.SchemaRegistry = schemas.RegistryConfig{URL: "https://r", CAFile: "/nonexistent/ca.pem"}
		},
		"listen ":           func(c *Config) { c.Listen = "127.0.0.1:99999" },
		"node_id":           func(c *Config) { c.NodeID = "evil\x1b[2J\nfake line" },
		"node_id ":          func(c *Config) { c.NodeID = "bad\xffutf8" },
		"auth":              func(c *Config) { c.Auth = "open" },
		"token_ttl":         func(c *Config) { c.TokenTTL = -time.Second },
		"credentials_ttl":   func(c *Config) { c.CredentialsTTL = -time.Second },
		"token_ttl ":        func(c *Config) { c.TokenTTL = 59 * time.Second },
		"token_ttl  ":       func(c *Config) { c.TokenTTL = 24*time.Hour + time.Second },
		"credentials_ttl ":  func(c *Config) { c.CredentialsTTL = 30 * time.Second },
		"credentials_ttl  ": func(c *Config) { c.CredentialsTTL = 12*time.Hour + time.Minute },
	} {
		key := strings.TrimSpace(key)
		t.Run(key, func(t *testing.T) {
			cfg := valid()
			set(&cfg)
			var se *settings.Error
			require.True(t, errors.As(cfg.Validate(), &se), "%+v", cfg)
			require.Equal(t, key, se.Key)

			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			start := time.Now()
			_, err := Start(ctx, cfg)
			require.True(t, errors.As(err, &se), "%v", err)
			require.Equal(t, key, se.Key)
			require.Less(t, time.Since(start), time.Second, "Start returned without trying Postgres")
		})
	}
	require.NoError(t, valid().Validate())
	for _, set := range []func(*Config){
		func(c *Config) { c.Listen = "127.0.0.1:0" },
		func(c *Config) { c.Listen = "[::1]:8181" },
		func(c *Config) { c.PostgresURL = "host=db dbname=mink user=mink" },
		func(c *Config) { c.KafkaBrokers = []string{"kafka-0.kafka:9092", "[::1]:9092"} },
		func(c *Config) {
			c.SchemaRegistry = schemas.RegistryConfig{URL: "https://u:p@registry:8081/sr"}
		},
		func(c *Config) { c.TokenTTL, c.CredentialsTTL = auth.MinTokenTTL, auth.MinCredentialsTTL },
		func(c *Config) { c.TokenTTL, c.CredentialsTTL = auth.MaxTokenTTL, auth.MaxCredentialsTTL },
	} {
		cfg := valid()
		set(&cfg)
		require.NoError(t, cfg.Validate(), "%+v", cfg)
	}
}

// Zero means the documented default, for the node's settings and for
// every part the node configures.
func TestZeroMeansDefault(t *testing.T) {
	c := valid().WithDefaults()
	require.Equal(t, DefaultListen, c.Listen)
	require.Equal(t, cluster.DefaultLeaseTTL, c.LeaseTTL)
	require.Equal(t, cluster.DefaultRoles(), c.Roles)
	require.NotEmpty(t, c.NodeID)

	p := c.plan(nil)
	require.Equal(t, 10*time.Second, p.postgres.IdleInTransactionTimeout, "lease_ttl/3")
	cl := p.cluster.WithDefaults()
	require.Equal(t, cluster.DefaultLeaseTTL, cl.LeaseTTL)
	require.Equal(t, cluster.DefaultLeaseTTL/cluster.SafetyMarginDivisor, cl.SafetyMargin)
	require.Zero(t, cl.MaxPartitions, "no cap")
	ix := p.indexer.WithDefaults()
	require.Equal(t, indexer.DefaultFlushInterval, ix.FlushInterval)
	require.Equal(t, int64(indexer.DefaultRangeSize), ix.RangeSize)
	require.Equal(t, int64(indexer.DefaultMemoryBudget), ix.MemoryBudget)
	require.Equal(t, writer.DefaultCommitInterval, p.writer.WithDefaults().CommitInterval)
	ob := p.objects.WithDefaults()
	require.Equal(t, int64(objects.DefaultCacheSize), ob.CacheSize)
	require.Equal(t, objects.DefaultCacheDir(c.NodeID), ob.CacheDir)
	require.Equal(t, tables.DefaultWarehouse, ob.Warehouse)
	require.Equal(t, tables.DefaultWarehouse, p.catalog.WithDefaults().Warehouse)
	require.Equal(t, tables.DefaultWarehouse, p.admin.WithDefaults().Warehouse)
	require.Equal(t, catalog.DefaultQueryTimeout, p.catalog.WithDefaults().QueryTimeout)
	require.NotNil(t, cl.Logger, "nil logger means slog.Default()")
	au := p.auth.WithDefaults()
	require.Equal(t, auth.ModePrincipals, au.Mode, "a node never starts open by default")
	require.Equal(t, auth.DefaultTokenTTL, au.TokenTTL)
	require.Equal(t, auth.DefaultCredentialsTTL, au.CredentialsTTL)
}
