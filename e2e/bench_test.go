package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/devenv"
	"github.com/minkhq/mink/internal/clustertest"
	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/internal/testkit"
)

// BenchmarkTableLoad measures a table load of demo.earthquakes (1,707
// rows committed over many small snapshots) on one node: the raw REST
// call, and iceberg-go's LoadTable (which also parses the metadata).
// Reports p50 and p99 in microseconds.
func BenchmarkTableLoad(b *testing.B) {
	events := testkit.USGSEvents(b)
	env, err := devenv.StartEnv(context.Background(), devenv.DevConfig{Nodes: 1, PostgresURL: pgtest.Schema(b), EphemeralPorts: true})
	require.NoError(b, err)
	defer env.Stop()
	ctx := context.Background()
	createTable(b, env, 3, map[string]any{"namespace": "demo", "name": "earthquakes",
		"topic": "earthquakes", "value_format": "json", "schema": json.RawMessage(devenv.EarthquakesSchema)})
	require.NoError(b, devenv.Produce(ctx, env.Brokers, "earthquakes", events))
	url := env.Nodes[0].URL()
	clustertest.WaitCaughtUp(b, url, "demo.earthquakes")

	measure := func(b *testing.B, load func() error) {
		lat := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			start := time.Now()
			require.NoError(b, load())
			lat = append(lat, time.Since(start))
		}
		b.StopTimer()
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	}
	b.Run("rest", func(b *testing.B) {
		measure(b, func() error {
			resp, err := http.Get(url + "/v1/namespaces/demo/tables/earthquakes")
			if err != nil {
				return err
			}
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			return err
		})
	})
	b.Run("iceberg-go", func(b *testing.B) {
		cat, err := rest.NewCatalog(ctx, "mink", url)
		require.NoError(b, err)
		measure(b, func() error {
			_, err := cat.LoadTable(ctx, table.Identifier{"demo", "earthquakes"})
			return err
		})
	})
}
