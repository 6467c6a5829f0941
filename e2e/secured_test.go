package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/minkhq/mink/devenv"
	"github.com/minkhq/mink/internal/clustertest"
	"github.com/minkhq/mink/internal/pglocal"
	"github.com/minkhq/mink/internal/testca"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/kafka"
)

// TestSecuredConnections is TestEarthquakesThreeNodes with every
// connection of the nodes secured (issue 13): Kafka over TLS, with a
// client certificate required, and SCRAM-SHA-512; PostgreSQL over TLS
// (sslmode=verify-full, a client certificate required). Neither server
// takes a plaintext connection, so every client of the nodes (metadata,
// indexers, reads for builds, tail loads, the pool) uses the settings.
func TestSecuredConnections(t *testing.T) {
	if _, err := pglocal.FindPostgresBin(); err != nil {
		t.Skip(err)
	}
	events := testkit.USGSEvents(t)
	ctx := context.Background()
	certs := testca.NewSet(t)
	kf, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.TLS(certs.ServerTLS(t, true)), kfake.EnableSASL(),
		kfake.Superuser("SCRAM-SHA-512", "mink", "kafka-secret"), kfake.SeedTopics(3, "earthquakes"))
	require.NoError(t, err)
	t.Cleanup(kf.Close)
	pg, err := pglocal.StartPostgresTLS(ctx, pglocal.TLS{ServerCert: certs.ServerCert, ServerKey: certs.ServerKey,
		CAFile: certs.CAFile, ClientCert: certs.ClientCert, ClientKey: certs.ClientKey}, testca.ClientName)
	require.NoError(t, err)
	t.Cleanup(pg.Stop)

	env, err := devenv.StartEnv(ctx, devenv.DevConfig{
		Nodes: 3, PostgresURL: pg.URL, EphemeralPorts: true, LeaseTTL: 3 * time.Second,
		Kafka:     kf.ListenAddrs(),
		KafkaTLS:  kafka.TLS{CAFile: certs.CAFile, CertFile: certs.ClientCert, KeyFile: certs.ClientKey},
		KafkaSASL: kafka.SASL{Mechanism: kafka.MechanismSCRAMSHA512, Username: "mink", Password: "kafka-secret"},
	})
	require.NoError(t, err)
	t.Cleanup(env.Stop)
	createEarthquakes(t, env, events)
	checkEarthquakes(t, env, events)
}

// TestServeSecuredSettings runs `mink serve` processes against a Kafka
// that takes TLS with a client certificate and SCRAM-SHA-256 only, and a
// PostgreSQL that takes verify-full TLS only: one node reads the settings
// from its --config file (kafka_tls: {…}, kafka_sasl: {…}), the other from
// flags. Together they index and serve the table.
func TestServeSecuredSettings(t *testing.T) {
	if _, err := pglocal.FindPostgresBin(); err != nil {
		t.Skip(err)
	}
	events := testkit.USGSEvents(t)
	ctx := context.Background()
	certs := testca.NewSet(t)
	env := clustertest.New(t, clustertest.KafkaOptions(kfake.TLS(certs.ServerTLS(t, true)), kfake.EnableSASL(),
		kfake.Superuser("SCRAM-SHA-256", "mink", "kafka-secret"), kfake.SeedTopics(3, "earthquakes")))
	pg, err := pglocal.StartPostgresTLS(ctx, pglocal.TLS{ServerCert: certs.ServerCert, ServerKey: certs.ServerKey,
		CAFile: certs.CAFile}, "mink")
	require.NoError(t, err)
	t.Cleanup(pg.Stop)

	config := filepath.Join(t.TempDir(), "mink.yaml")
	require.NoError(t, os.WriteFile(config, fmt.Appendf(nil, `kafka_tls:
  ca_file: %s
  cert_file: %s
  key_file: %s
kafka_sasl: {mechanism: scram-sha-256, username: mink, password: kafka-secret}
`, certs.CAFile, certs.ClientCert, certs.ClientKey), 0o600))
	first := env.StartNode(clustertest.NodeOptions{PostgresURL: pg.URL, Args: []string{"--config", config}})
	second := env.StartNode(clustertest.NodeOptions{PostgresURL: pg.URL, Args: []string{"--kafka-tls-ca", certs.CAFile,
		"--kafka-tls-cert", certs.ClientCert, "--kafka-tls-key", certs.ClientKey, "--kafka-tls-server-name", "localhost",
		"--kafka-sasl-mechanism", "SCRAM-SHA-256", "--kafka-sasl-username", "mink", "--kafka-sasl-password", "kafka-secret"}})

	require.NoError(t, devenv.CreateTable(ctx, first.URL(), map[string]any{
		"namespace": "demo", "name": "earthquakes", "topic": "earthquakes",
		"value_format": "json", "key_format": "string", "schema": json.RawMessage(devenv.EarthquakesSchema),
	}))
	opts, err := kafka.Config{Brokers: env.Brokers,
		TLS:  kafka.TLS{CAFile: certs.CAFile, CertFile: certs.ClientCert, KeyFile: certs.ClientKey},
		SASL: kafka.SASL{Mechanism: kafka.MechanismSCRAMSHA256, Username: "mink", Password: "kafka-secret"}}.ClientOpts()
	require.NoError(t, err)
	require.NoError(t, devenv.Produce(ctx, env.Brokers, "earthquakes", events, opts...))
	clustertest.WaitCaughtUp(t, first.URL(), "demo.earthquakes")

	at := clustertest.ScanAll(t, first.URL(), "demo.earthquakes")
	require.EqualValues(t, len(events), at.NumRows())
	ids := map[string]bool{}
	for _, c := range clustertest.Column(t, at, "id") {
		for i := range c.Len() {
			ids[c.ValueStr(i)] = true
		}
	}
	require.Len(t, ids, len(events), "every event once")
	for _, e := range events {
		require.True(t, ids[e.ID], "event %s", e.ID)
	}
	// Both nodes index: each reached Kafka with its own settings.
	require.Eventually(t, func() bool {
		counts := clustertest.AdminPartitionCounts(t, first.URL(), "demo.earthquakes")
		return counts[first.ID] > 0 && counts[second.ID] > 0
	}, 20*time.Second, 100*time.Millisecond)
}
