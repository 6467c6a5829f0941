package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/minkhq/mink/devenv"
	"github.com/minkhq/mink/internal/pglocal"
	"github.com/minkhq/mink/internal/testcerts"
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
	certs := testcerts.New(t, "e2e")
	kf, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.TLS(certs.ServerTLS(t, true)), kfake.EnableSASL(),
		kfake.Superuser("SCRAM-SHA-512", "mink", "kafka-secret"), kfake.SeedTopics(3, "earthquakes"))
	require.NoError(t, err)
	t.Cleanup(kf.Close)
	pg, err := pglocal.StartPostgresTLS(ctx, pglocal.TLS{ServerCert: certs.ServerCert, ServerKey: certs.ServerKey,
		CAFile: certs.CAFile, ClientCert: certs.ClientCert, ClientKey: certs.ClientKey}, testcerts.ClientName)
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
