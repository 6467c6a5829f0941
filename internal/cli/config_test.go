package cli

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/kafka"
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

// kafka_tls and kafka_sasl are maps in the YAML file (kafka_tls may be a
// plain boolean too); each key has a flat flag and a MINK_* variable,
// with the usual precedence.
func TestConfigKafkaConnection(t *testing.T) {
	file := filepath.Join(t.TempDir(), "mink.yaml")
	require.NoError(t, os.WriteFile(file, []byte(`kafka_tls:
  ca_file: /etc/kafka/ca.pem
  cert_file: /etc/kafka/client.pem
  key_file: /etc/kafka/client-key.pem
  server_name: kafka.internal
kafka_sasl:
  mechanism: oauthbearer
  oauth_token_url: https://idp/token
  oauth_client_id: mink
  oauth_client_secret: from-file
  oauth_scopes: [kafka.read, kafka.describe]
`), 0o600))
	t.Setenv("MINK_KAFKA_SASL_OAUTH_CLIENT_SECRET", "from-env")

	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	var tls kafka.TLS
	var sasl kafka.SASL
	kafkaFlags(fs, &tls, &sasl)
	require.NoError(t, parse(fs, []string{"--config", file, "--kafka-tls-server-name", "broker.internal"}))
	require.Equal(t, kafka.TLS{CAFile: "/etc/kafka/ca.pem", CertFile: "/etc/kafka/client.pem", KeyFile: "/etc/kafka/client-key.pem",
		ServerName: "broker.internal"}, tls)
	require.Equal(t, kafka.SASL{Mechanism: "oauthbearer", OAuthTokenURL: "https://idp/token", OAuthClientID: "mink",
		OAuthClientSecret: "from-env", OAuthScopes: []string{"kafka.read", "kafka.describe"}}, sasl)

	require.NoError(t, os.WriteFile(file, []byte("kafka_tls: true\nkafka_sasl:\n  mechanism: scram-sha-512\n  username: mink\n"), 0o600))
	t.Setenv("MINK_KAFKA_SASL_PASSWORD", "pw")
	t.Setenv("MINK_KAFKA_SASL_OAUTH_CLIENT_SECRET", "")
	fs = flag.NewFlagSet("t", flag.ContinueOnError)
	tls, sasl = kafka.TLS{}, kafka.SASL{}
	kafkaFlags(fs, &tls, &sasl)
	require.NoError(t, parse(fs, []string{"--config", file}))
	require.Equal(t, kafka.TLS{Enabled: true}, tls)
	require.Equal(t, kafka.SASL{Mechanism: "scram-sha-512", Username: "mink", Password: "pw"}, sasl)

	require.NoError(t, os.WriteFile(file, []byte("kafka_sasl:\n  user: mink\n"), 0o600))
	fs = flag.NewFlagSet("t", flag.ContinueOnError)
	kafkaFlags(fs, &tls, &sasl)
	require.ErrorContains(t, parse(fs, []string{"--config", file}), `unknown key "kafka_sasl.user"`)

	for key, want := range map[string]string{kafka.KeyTLSCAFile: "kafka-tls-ca", kafka.KeyTLSEnabled: "kafka-tls",
		kafka.KeySASLOAuthSecret: "kafka-sasl-oauth-client-secret", kafka.KeySASLTokenFile: "kafka-sasl-token-file",
		schemas.KeyCertFile: "schema-registry-cert", schemas.KeyKeyFile: "schema-registry-key"} {
		require.Equal(t, want, flagName(key), key)
	}
	require.Equal(t, "MINK_KAFKA_SASL_OAUTH_CLIENT_SECRET", envName("kafka-sasl-oauth-client-secret"))
}

// A Kafka setting that cannot work is a flag error naming the flag, for
// serve and dev alike; the secret is never in the message.
func TestServeRejectsBadKafkaSettings(t *testing.T) {
	t.Setenv("MINK_KAFKA_SASL_PASSWORD", "")
	base := []string{"--postgres", "postgres://x", "--kafka", "k:9092"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--kafka-sasl-mechanism", "scram-sha-256", "--kafka-sasl-username", "u"},
			"--kafka-sasl-password is required with kafka_sasl.mechanism scram-sha-256"},
		{[]string{"--kafka-sasl-mechanism", "kerberos"}, `--kafka-sasl-mechanism "kerberos" is not one of plain`},
		{[]string{"--kafka-sasl-password", "hunter2"}, "--kafka-sasl-password is set but kafka_sasl.mechanism is empty (no SASL)"},
		{[]string{"--kafka-tls-ca", "/nonexistent/ca.pem"}, "--kafka-tls-ca open /nonexistent/ca.pem: no such file or directory"},
		{[]string{"--kafka-tls-cert", "/c.pem"}, "--kafka-tls-key is required with kafka_tls.cert_file"},
	} {
		err := serve(t.Context(), append(base, tc.args...), io.Discard)
		require.ErrorContains(t, err, tc.want)
		var ue usageError
		require.ErrorAs(t, err, &ue)
		require.NotContains(t, err.Error(), "hunter2")
	}
	err := dev(t.Context(), []string{"--kafka-sasl-mechanism", "plain", "--kafka-sasl-username", "u", "--kafka-sasl-password", "p"},
		io.Discard, io.Discard)
	require.ErrorContains(t, err, "--kafka is required with the kafka_tls and kafka_sasl settings")
	err = dev(t.Context(), []string{"--kafka", "k:9092", "--kafka-sasl-mechanism", "plain"}, io.Discard, io.Discard)
	require.ErrorContains(t, err, "--kafka-sasl-username is required with kafka_sasl.mechanism plain")
}
