package e2e

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/devenv"
	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/tables"
)

// TestZeroLagLoads: 1,000 rounds (MINK_ZEROLAG_ROUNDS) of produce-then-load over random partitions,
// through different nodes. Every acknowledged record is in the snapshot
// the load returns, and no record twice: the loaded snapshot's data files
// tile each partition's offsets from 0 past the last acknowledged record
// with no overlap (a raw table has a row for every offset), and a full
// read every 250 rounds finds exactly the produced values. Flush and commit
// intervals are long, so most loads carry a tail.
func TestZeroLagLoads(t *testing.T) {
	rounds := 1000
	if n, err := strconv.Atoi(os.Getenv("MINK_ZEROLAG_ROUNDS")); err == nil {
		rounds = n
	}
	ctx := context.Background()
	env, err := devenv.StartEnv(ctx, devenv.DevConfig{Nodes: 3, PostgresURL: pgtest.Schema(t), EphemeralPorts: true,
		LeaseTTL: 3 * time.Second, FlushInterval: 2 * time.Second, CommitInterval: 1500 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(env.Stop)
	const partitions = 4
	require.NoError(t, env.Kafka.CreateTopic("zl", partitions, nil))
	require.NoError(t, devenv.CreateTable(ctx, env.Nodes[0].URL(), map[string]any{
		"namespace": "zl", "name": "events", "topic": "zl", "value_format": "raw"}))

	cl, err := kgo.NewClient(kgo.SeedBrokers(env.Brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer cl.Close()
	cats := make([]*rest.Catalog, len(env.Nodes))
	for i, n := range env.Nodes {
		cats[i], err = rest.NewCatalog(ctx, "mink", n.URL())
		require.NoError(t, err)
	}

	rng := rand.New(rand.NewPCG(7, 11))
	produced := map[pk]string{}
	next := map[int32]int64{} // per partition: one past the last acknowledged offset
	var tailLoads int
	var lat []time.Duration
	began := time.Now()
	for round := 0; round < rounds; round++ {
		p := int32(rng.IntN(partitions))
		var recs []*kgo.Record
		for i := 0; i < 1+rng.IntN(3); i++ {
			recs = append(recs, &kgo.Record{Topic: "zl", Partition: p, Value: []byte(fmt.Sprintf("r%d-%d", round, i))})
		}
		res := cl.ProduceSync(ctx, recs...)
		require.NoError(t, res.FirstErr())
		for _, r := range res {
			produced[pk{r.Record.Partition, r.Record.Offset}] = string(r.Record.Value)
			next[p] = max(next[p], r.Record.Offset+1)
		}

		start := time.Now()
		tbl, err := cats[round%len(cats)].LoadTable(ctx, table.Identifier{"zl", "events"})
		require.NoError(t, err)
		lat = append(lat, time.Since(start))
		tasks, err := tbl.Scan().PlanFiles(ctx)
		require.NoError(t, err)
		ranges := map[int32][][2]int64{}
		for _, task := range tasks {
			ref, ok := tables.ParseDataFileKey(tables.Key(task.File.FilePath()))
			require.True(t, ok, task.File.FilePath())
			ranges[ref.Partition] = append(ranges[ref.Partition], [2]int64{ref.Start, ref.End})
		}
		for part := int32(0); part < partitions; part++ {
			rs := ranges[part]
			slices.SortFunc(rs, func(a, b [2]int64) int { return int(a[0] - b[0]) })
			end := int64(0)
			for _, r := range rs {
				require.Equal(t, end, r[0], "round %d partition %d: files %v leave a gap or overlap", round, part, rs)
				end = r[1]
			}
			require.GreaterOrEqual(t, end, next[part], "round %d partition %d: acknowledged offsets missing from the load (files %v)", round, part, rs)
		}
		if isTransient(t, env.Nodes[round%len(env.Nodes)].URL(), tbl.MetadataLocation()) {
			tailLoads++
		}
		if round%100 == 99 {
			t.Logf("round %d at %v: last load %v, %d files planned", round+1, time.Since(began).Round(time.Second), lat[len(lat)-1], len(tasks))
		}
		if round%250 == 249 || round == rounds-1 {
			at, err := tbl.Scan().ToArrowTable(ctx)
			require.NoError(t, err)
			got := map[pk]string{}
			parts, offsets, values := column(t, at, "_kafka", "partition"), column(t, at, "_kafka", "offset"), column(t, at, "value")
			for c := range parts {
				for i := 0; i < parts[c].Len(); i++ {
					k := pk{parts[c].(*array.Int32).Value(i), offsets[c].(*array.Int64).Value(i)}
					_, dup := got[k]
					require.False(t, dup, "round %d: %v twice", round, k)
					got[k] = string(values[c].(*array.Binary).Value(i))
				}
			}
			at.Release()
			for k, v := range produced {
				require.Equal(t, v, got[k], "round %d: record %v", round, k)
			}
			require.Len(t, got, len(produced), "round %d: rows that were not produced", round)
		}
	}
	slices.Sort(lat)
	var built, reused float64
	for _, n := range env.Nodes {
		built += metricValue(t, n.URL(), `mink_tail_files_total{how="built"}`)
		reused += metricValue(t, n.URL(), `mink_tail_files_total{how="reused"}`)
	}
	t.Logf("%d rounds, %d loads with a tail (tail files: %.0f built, %.0f reused); load latency p50 %v p99 %v",
		rounds, tailLoads, built, reused, lat[len(lat)/2], lat[len(lat)*99/100])
	require.Positive(t, tailLoads, "the test exercised transient snapshots")
	require.Positive(t, reused, "loads reuse the tail files of earlier loads")
}

// metricValue returns the value of one series of a node's /metrics, or 0.
func metricValue(t *testing.T, nodeURL, series string) float64 {
	resp, err := http.Get(nodeURL + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			require.NoError(t, err, line)
			return f
		}
	}
	return 0
}

// isTransient reports whether a load answered a location other than the
// table's committed one (a writer commit in between also counts: the
// figure is informative only).
func isTransient(t *testing.T, nodeURL, location string) bool {
	resp, err := http.Get(nodeURL + "/admin/v1/tables/zl.events")
	require.NoError(t, err)
	defer resp.Body.Close()
	var body struct {
		MetadataLocation string `json:"metadata_location"`
	}
	require.NoError(t, jsonDecode(resp, &body))
	return body.MetadataLocation != location
}
