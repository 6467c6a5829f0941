package cli

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/schemas"
)

// Precedence: flag > MINK_* variable > YAML file; the seed's names stay
// (lease_ttl, max_partitions) and --kafka reads MINK_KAFKA_BROKERS.
func TestConfigPrecedence(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "mink.yaml")
	require.NoError(t, os.WriteFile(file, []byte("lease_ttl: 9s\nmax_partitions: 7\nkafka: [a:1, b:2]\ncache_size: 2GiB\nlisten: ':1'\n"), 0o600))
	t.Setenv("MINK_LEASE_TTL", "5s")
	t.Setenv("MINK_KAFKA_BROKERS", "env:9092")

	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	ttl := fs.Duration("lease-ttl", 30*time.Second, "")
	maxP := fs.Int("max-partitions", 0, "")
	listen := fs.String("listen", ":8181", "")
	var kafka listFlag
	fs.Var(&kafka, "kafka", "")
	size := bytesFlag(0)
	fs.Var(&size, "cache-size", "")
	require.NoError(t, parse(fs, []string{"--config", file, "--listen", ":2"}))
	require.Equal(t, 5*time.Second, *ttl, "environment beats the file")
	require.Equal(t, 7, *maxP, "file fills what nothing else set")
	require.Equal(t, ":2", *listen, "flag beats the file")
	require.Equal(t, listFlag{"env:9092"}, kafka, "MINK_KAFKA_BROKERS names --kafka")
	require.EqualValues(t, 2<<30, size)

	require.NoError(t, os.WriteFile(file, []byte("colour: red\n"), 0o600))
	fs2 := flag.NewFlagSet("t", flag.ContinueOnError)
	require.ErrorContains(t, parse(fs2, []string{"--config", file}), `unknown key "colour"`)
}

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]int64{"10GiB": 10 << 30, "512MiB": 512 << 20, "1000": 1000, "1.5KiB": 1536, "2GB": 2e9} {
		got, err := parseBytes(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "ten", "-1", "5XB", "1.5B", "0.3KiB", "9000000TiB", "InfB", "NaNB", "99999999999999999999"} {
		_, err := parseBytes(in)
		require.Error(t, err, in)
	}
}

// serve rejects settings the sharing rules cannot use, before it connects.
func TestServeRejectsBadSettings(t *testing.T) {
	for _, args := range [][]string{
		{"--postgres", "postgres://x", "--kafka", "k:9092", "--max-partitions", "-1"},
		{"--postgres", "postgres://x", "--kafka", "k:9092", "--lease-ttl", "0s"},
	} {
		err := serve(t.Context(), args, io.Discard)
		require.Error(t, err, "%v", args)
	}
	err := serve(t.Context(), []string{"--postgres", "postgres://x", "--kafka", "k:9092", "--max-partitions", "-1"}, io.Discard)
	require.ErrorContains(t, err, "--max-partitions must be 0 (no cap) or more, not -1")
}

// Help shows a size as parseBytes reads it back.
func TestSizeString(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 1000: "1000", 1536: "1536", 3 << 10: "3KiB", 10 << 30: "10GiB", 128 << 20: "128MiB", 1 << 40: "1TiB"} {
		require.Equal(t, want, sizeString(n))
		back, err := parseBytes(want)
		require.NoError(t, err)
		require.Equal(t, n, back)
	}
}

// schema_registry is a map in the YAML file; each of its keys has a flag
// and a variable of its own, with the same precedence.
func TestConfigSchemaRegistry(t *testing.T) {
	file := filepath.Join(t.TempDir(), "mink.yaml")
	require.NoError(t, os.WriteFile(file, []byte(`schema_registry:
  url: https://registry:8081
  username: mink
  password: from-file
  ca_file: /etc/ca.pem
`), 0o600))
	t.Setenv("MINK_SCHEMA_REGISTRY_PASSWORD", "from-env")

	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	var cfg schemas.RegistryConfig
	registryFlags(fs, &cfg)
	require.NoError(t, parse(fs, []string{"--config", file, "--schema-registry-ca", "/tmp/ca.pem"}))
	require.Equal(t, schemas.RegistryConfig{URL: "https://registry:8081", Username: "mink", Password: "from-env",
		CAFile: "/tmp/ca.pem"}, cfg)

	t.Setenv("MINK_SCHEMA_REGISTRY_URL", "http://env:8081")
	t.Setenv("MINK_SCHEMA_REGISTRY_USER", "")
	t.Setenv("MINK_SCHEMA_REGISTRY_TOKEN", "tok")
	fs = flag.NewFlagSet("t", flag.ContinueOnError)
	cfg = schemas.RegistryConfig{}
	registryFlags(fs, &cfg)
	require.NoError(t, parse(fs, nil))
	require.Equal(t, schemas.RegistryConfig{URL: "http://env:8081", Password: "from-env", Token: "tok"}, cfg)

	require.NoError(t, os.WriteFile(file, []byte("schema_registry:\n  uri: http://r\n"), 0o600))
	fs = flag.NewFlagSet("t", flag.ContinueOnError)
	registryFlags(fs, &cfg)
	require.ErrorContains(t, parse(fs, []string{"--config", file}), `unknown key "schema_registry.uri"`)

	for key, want := range map[string]string{"lease_ttl": "lease-ttl", "schema_registry.url": "schema-registry",
		"schema_registry.username": "schema-registry-user", "schema_registry.ca_file": "schema-registry-ca",
		"schema_registry.nope": ""} {
		require.Equal(t, want, flagName(key), key)
	}
}
