package e2e

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/catalog/rest"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/auth"
	"github.com/minkhq/mink/devenv"
	"github.com/minkhq/mink/internal/clustertest"
	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/kafka"
	"github.com/minkhq/mink/objects"
	"github.com/minkhq/mink/rangefile"
	"github.com/minkhq/mink/schemas"
)

// TestVendedCredentialsScan: iceberg-go reads a whole table through an S3
// API in auth mode principals (its metadata JSON, manifest list, manifests
// and data files, each request signed with credentials vended for the
// table, data files built from Kafka), and the same credentials read
// nothing of another table.
func TestVendedCredentialsScan(t *testing.T) {
	events := testkit.USGSEvents(t)
	ctx := context.Background()
	pgURL := pgtest.Schema(t)
	env, err := devenv.StartEnv(ctx, devenv.DevConfig{Nodes: 1, PostgresURL: pgURL, EphemeralPorts: true, LeaseTTL: 3 * time.Second})
	require.NoError(t, err)
	t.Cleanup(env.Stop)
	for name, evs := range map[string][]devenv.Event{"t1": events[:300], "t2": events[300:400]} {
		createTable(t, env, 2, map[string]any{"namespace": "a", "name": name, "topic": name,
			"value_format": "json", "key_format": "string", "schema": json.RawMessage(devenv.EarthquakesSchema)})
		require.NoError(t, devenv.Produce(ctx, env.Brokers, name, evs))
		clustertest.WaitCaughtUp(t, env.Nodes[0].URL(), "a."+name)
	}

	// The node serves with auth none (the harness's mode); this S3 API of
	// the same cluster checks signatures, with the cluster's key.
	pool, err := pgxpool.New(ctx, pgURL)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	secret, err := auth.ClusterSecret(ctx, pool)
	require.NoError(t, err)
	key := auth.DeriveKey(secret, auth.PurposeCredentials)
	kc, err := kafka.New(kafka.Config{Brokers: env.Brokers})
	require.NoError(t, err)
	t.Cleanup(kc.Close)
	s, err := objects.New(objects.Config{NodeID: "signed", CacheDir: t.TempDir(), Auth: auth.ModePrincipals,
		CredentialsKey: key, Region: "us-east-1"}, pool, rangefile.NewBuilder(pool, kc, schemas.NewStore(pool, nil)), nil)
	require.NoError(t, err)
	ts := httptest.NewServer(s)
	t.Cleanup(func() { ts.Close(); s.Close() })

	cat, err := rest.NewCatalog(ctx, "mink", env.Nodes[0].URL())
	require.NoError(t, err)
	creds, err := auth.Vend(key, "alice", []string{"a/t1/"}, time.Now().Add(time.Hour))
	require.NoError(t, err)
	fsys := func(context.Context) (icebergio.IO, error) {
		return icebergio.LoadFS(ctx, map[string]string{
			icebergio.S3EndpointURL: ts.URL, icebergio.S3Region: "us-east-1",
			icebergio.S3AccessKeyID: creds.AccessKeyID, icebergio.S3SecretAccessKey: creds.SecretAccessKey,
			icebergio.S3SessionToken: creds.SessionToken,
		}, "s3://mink/a")
	}
	location := func(name string) string {
		tbl, err := cat.LoadTable(ctx, table.Identifier{"a", name})
		require.NoError(t, err)
		return tbl.MetadataLocation()
	}

	tbl, err := table.NewFromLocation(ctx, table.Identifier{"a", "t1"}, location("t1"), fsys, nil)
	require.NoError(t, err)
	at, err := tbl.Scan().ToArrowTable(ctx)
	require.NoError(t, err)
	defer at.Release()
	require.EqualValues(t, 300, at.NumRows())
	ids := map[string]bool{}
	for _, c := range clustertest.Column(t, at, "id") {
		for i := 0; i < c.Len(); i++ {
			ids[c.(*array.String).Value(i)] = true
		}
	}
	for _, e := range events[:300] {
		require.True(t, ids[e.ID], "event %s missing", e.ID)
	}
	require.Greater(t, s.Stats().Builds, uint64(0), "data files were built and served under signatures")

	_, err = table.NewFromLocation(ctx, table.Identifier{"a", "t2"}, location("t2"), fsys, nil)
	require.ErrorContains(t, err, "AccessDenied")
}
