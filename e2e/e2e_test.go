// Package e2e runs Mink end to end: real PostgreSQL, an in-process Kafka
// (kfake) over the wire, three nodes, and apache/iceberg-go reading the
// tables through the REST catalog and the S3 API.
package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/catalog/rest"
	_ "github.com/apache/iceberg-go/io/gocloud/s3"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/devenv"
	"github.com/minkhq/mink/internal/clustertest"
	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/tables"
)

func startEnv(t *testing.T, nodes int) *devenv.Env {
	t.Helper()
	ctx := context.Background()
	env, err := devenv.StartEnv(ctx, devenv.DevConfig{
		Nodes: nodes, PostgresURL: pgtest.Schema(t), EphemeralPorts: true, LeaseTTL: 3 * time.Second,
	})
	require.NoError(t, err)
	t.Cleanup(env.Stop)
	return env
}

// createTable creates the topic of table def (def["topic"]) with
// partitions on the env's in-process Kafka, and the table through the first node's
// admin API.
func createTable(t testing.TB, env *devenv.Env, partitions int, def map[string]any) {
	t.Helper()
	if env.Kafka != nil { // an external Kafka has the topic already
		require.NoError(t, env.Kafka.CreateTopic(def["topic"].(string), int32(partitions), nil))
	}
	require.NoError(t, devenv.CreateTable(context.Background(), env.Nodes[0].URL(), def))
}

// createEarthquakes creates table demo.earthquakes over a topic of 3
// partitions, produces events to it (keyed by their ids) and waits until
// it is committed.
func createEarthquakes(t *testing.T, env *devenv.Env, events []devenv.Event) {
	t.Helper()
	createTable(t, env, 3, map[string]any{
		"namespace": "demo", "name": "earthquakes", "topic": "earthquakes",
		"value_format": "json", "key_format": "string", "schema": json.RawMessage(devenv.EarthquakesSchema),
	})
	require.NoError(t, devenv.Produce(context.Background(), env.Brokers, "earthquakes", events, env.KafkaOpts...))
	clustertest.WaitCaughtUp(t, env.Nodes[0].URL(), "demo.earthquakes")
}

type pk struct {
	partition int32
	offset    int64
}

func TestEarthquakesThreeNodes(t *testing.T) {
	events := testkit.USGSEvents(t)
	require.Len(t, events, 1707)

	env := startEnv(t, 3)
	createEarthquakes(t, env, events)
	checkEarthquakes(t, env, events)
}

// checkEarthquakes reads demo.earthquakes of env's three nodes with
// iceberg-go and checks it holds events, each once, and that each node
// serves the same bytes for a data file.
func checkEarthquakes(t *testing.T, env *devenv.Env, events []devenv.Event) {
	t.Helper()
	ctx := context.Background()
	// Read through a different node than the one the table was created on.
	at := clustertest.ScanAll(t, env.Nodes[2].URL(), "demo.earthquakes")
	require.EqualValues(t, len(events), at.NumRows())

	byID := map[string]devenv.Event{}
	for _, e := range events {
		byID[e.ID] = e
	}
	parts, offsets := clustertest.Column(t, at, "_kafka", "partition"), clustertest.Column(t, at, "_kafka", "offset")
	keys, ids := clustertest.Column(t, at, "_kafka", "key"), clustertest.Column(t, at, "id")
	mags, places, times := clustertest.Column(t, at, "properties", "mag"), clustertest.Column(t, at, "properties", "place"), clustertest.Column(t, at, "properties", "time")
	seen := map[pk]bool{}
	seenIDs := map[string]bool{}
	for c := range parts {
		for i := 0; i < parts[c].Len(); i++ {
			k := pk{parts[c].(*array.Int32).Value(i), offsets[c].(*array.Int64).Value(i)}
			require.False(t, seen[k], "row %v appears twice", k)
			seen[k] = true
			id := ids[c].(*array.String).Value(i)
			require.Equal(t, id, keys[c].(*array.String).Value(i), "key is the event id")
			src, ok := byID[id]
			require.True(t, ok, "unknown event %s", id)
			seenIDs[id] = true
			if src.Mag == nil {
				require.True(t, mags[c].IsNull(i), "event %s mag", id)
			} else {
				require.Equal(t, *src.Mag, mags[c].(*array.Float64).Value(i), "event %s mag", id)
			}
			require.Equal(t, src.Place, places[c].(*array.String).Value(i), "event %s place", id)
			ts := times[c].(*array.Timestamp).Value(i)
			require.Equal(t, src.Time.UnixMicro(), int64(ts), "event %s time", id)
		}
	}
	require.Len(t, seen, len(events))
	require.Len(t, seenIDs, len(events))

	// The same data file served by each node for itself (cache or a local
	// build from Kafka) is the same bytes: the encoding is deterministic.
	cat, err := rest.NewCatalog(ctx, "mink", env.Nodes[0].URL())
	require.NoError(t, err)
	tbl, err := cat.LoadTable(ctx, table.Identifier{"demo", "earthquakes"})
	require.NoError(t, err)
	tasks, err := tbl.Scan().PlanFiles(ctx)
	require.NoError(t, err)
	require.NotEmpty(t, tasks)
	for _, task := range tasks[:min(3, len(tasks))] {
		key := tables.Key(task.File.FilePath())
		var first []byte
		for _, n := range env.Nodes {
			req, err := http.NewRequest(http.MethodGet, n.URL()+"/mink/"+key, nil)
			require.NoError(t, err)
			n.SignForward(req) // serve here, do not forward to the owner
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, resp.StatusCode, "%s on %s: %s", key, n.ID(), body)
			require.EqualValues(t, task.File.FileSizeBytes(), len(body))
			if first == nil {
				first = body
			}
			require.Equal(t, first, body, "%s differs on %s", key, n.ID())
		}
	}

	// Every partition has offsets 0..n-1 with no gap.
	perPartition := map[int32]int64{}
	for k := range seen {
		perPartition[k.partition]++
	}
	for k := range seen {
		require.Less(t, k.offset, perPartition[k.partition], "offset %d of partition %d past the count", k.offset, k.partition)
	}
}

func TestRawValuesAndDeadLetters(t *testing.T) {
	env := startEnv(t, 1)
	ctx := context.Background()
	url := env.Nodes[0].URL()

	// raw: value bytes come back exactly, whatever they are.
	createTable(t, env, 2, map[string]any{
		"namespace": "test", "name": "blobs", "topic": "blobs", "value_format": "raw",
	})
	cl, err := kgo.NewClient(kgo.SeedBrokers(env.Brokers...))
	require.NoError(t, err)
	defer cl.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	var recs []*kgo.Record
	for i := 0; i < 300; i++ {
		v := make([]byte, rng.IntN(200))
		for j := range v {
			v[j] = byte(rng.UintN(256))
		}
		recs = append(recs, &kgo.Record{Topic: "blobs", Partition: int32(i % 2), Value: v,
			Headers: []kgo.RecordHeader{{Key: "n", Value: []byte(fmt.Sprint(i))}, {Key: "n", Value: []byte("dup")}}})
	}
	produced := map[pk][]byte{}
	cl2, err := kgo.NewClient(kgo.SeedBrokers(env.Brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer cl2.Close()
	res := cl2.ProduceSync(ctx, recs...)
	require.NoError(t, res.FirstErr())
	for _, r := range res {
		produced[pk{r.Record.Partition, r.Record.Offset}] = r.Record.Value
	}
	clustertest.WaitCaughtUp(t, url, "test.blobs")
	// Progress: 150 records per partition indexed within the last minute.
	progress := clustertest.Partitions(t, url, "test.blobs")
	require.Len(t, progress, 2)
	for _, p := range progress {
		require.EqualValues(t, 150, p.IndexedOffset)
		require.EqualValues(t, 150, p.HighWatermark)
		require.Zero(t, p.Lag)
		require.InDelta(t, 2.5, p.RecordsPerSecond, 1e-9)
	}
	at := clustertest.ScanAll(t, url, "test.blobs")
	require.EqualValues(t, len(produced), at.NumRows())
	parts, offsets, values := clustertest.Column(t, at, "_kafka", "partition"), clustertest.Column(t, at, "_kafka", "offset"), clustertest.Column(t, at, "value")
	headers := clustertest.Column(t, at, "_kafka", "headers")
	for c := range parts {
		for i := 0; i < parts[c].Len(); i++ {
			k := pk{parts[c].(*array.Int32).Value(i), offsets[c].(*array.Int64).Value(i)}
			want, ok := produced[k]
			require.True(t, ok, "row %v was not produced", k)
			require.Equal(t, want, values[c].(*array.Binary).Value(i), "value of %v", k)
			delete(produced, k)
			hl := headers[c].(*array.List)
			start, end := hl.ValueOffsets(i)
			require.EqualValues(t, 2, end-start, "headers of %v kept, duplicates too", k)
		}
	}
	require.Empty(t, produced, "records missing from the table")

	// json: a malformed record goes to ~dlq with its bytes; good ones stay.
	createTable(t, env, 1, map[string]any{
		"namespace": "test", "name": "quakes", "topic": "quakes", "value_format": "json",
		"schema": json.RawMessage(devenv.EarthquakesSchema),
	})
	good := `{"id":"a1","properties":{"mag":3,"place":"here","time":1700000000000},"geometry":{"type":"Point","coordinates":[1,2,3]}}`
	bad := []string{`{"id":"b1","properties":{"mag":`, `{"id":"b2","properties":{"mag":"strong","time":1700000000000}}`, `[1,2,3]`}
	vals := []string{good, bad[0], good, bad[1], bad[2]}
	var qrecs []*kgo.Record
	for _, v := range vals {
		qrecs = append(qrecs, &kgo.Record{Topic: "quakes", Value: []byte(v)})
	}
	require.NoError(t, cl.ProduceSync(ctx, qrecs...).FirstErr())
	clustertest.WaitCaughtUp(t, url, "test.quakes")

	qt := clustertest.ScanAll(t, url, "test.quakes")
	require.EqualValues(t, 2, qt.NumRows())
	mags := clustertest.Column(t, qt, "properties", "mag")
	require.Equal(t, 3.0, mags[0].(*array.Float64).Value(0))

	dt := clustertest.ScanAll(t, url, "test.quakes~dlq")
	require.EqualValues(t, 3, dt.NumRows())
	dOffsets, dValues, dErrors := clustertest.Column(t, dt, "_kafka", "offset"), clustertest.Column(t, dt, "value"), clustertest.Column(t, dt, "error")
	got := map[int64]string{}
	for c := range dOffsets {
		for i := 0; i < dOffsets[c].Len(); i++ {
			o := dOffsets[c].(*array.Int64).Value(i)
			got[o] = string(dValues[c].(*array.Binary).Value(i))
			require.NotEmpty(t, dErrors[c].(*array.String).Value(i), "dead letter %d has a reason", o)
		}
	}
	require.Equal(t, map[int64]string{1: bad[0], 3: bad[1], 4: bad[2]}, got)

	// The node's metrics count what it indexed.
	resp, err := http.Get(url + "/metrics")
	require.NoError(t, err)
	metrics, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Contains(t, string(metrics), `mink_indexed_records_total{partition="0",table="test.blobs"} 150`)
	require.Contains(t, string(metrics), `mink_indexed_records_total{partition="1",table="test.blobs"} 150`)
	require.Contains(t, string(metrics), `mink_dead_letters_total{partition="0",table="test.quakes"} 3`)
	require.Contains(t, string(metrics), `mink_partition_lag_records{partition="0",table="test.quakes"} 0`)
}

func jsonDecode(resp *http.Response, v any) error { return json.NewDecoder(resp.Body).Decode(v) }

// Creating a table on a topic that already holds records indexes its
// history (start: earliest), and progress is visible per partition.
func TestBackfill(t *testing.T) {
	env := startEnv(t, 2)
	ctx := context.Background()
	url := env.Nodes[0].URL()
	require.NoError(t, env.Kafka.CreateTopic("history", 2, nil))
	cl, err := kgo.NewClient(kgo.SeedBrokers(env.Brokers...), kgo.DefaultProduceTopic("history"))
	require.NoError(t, err)
	defer cl.Close()
	var recs []*kgo.Record
	for i := 0; i < 5000; i++ {
		recs = append(recs, &kgo.Record{Key: []byte(fmt.Sprint(i)), Value: []byte(fmt.Sprintf("v%d", i))})
	}
	require.NoError(t, cl.ProduceSync(ctx, recs...).FirstErr())

	require.NoError(t, devenv.CreateTable(ctx, url, map[string]any{
		"namespace": "test", "name": "history", "topic": "history", "value_format": "string", "start": "earliest"}))
	clustertest.WaitCaughtUp(t, url, "test.history")
	progress := clustertest.Partitions(t, url, "test.history")
	var indexed int64
	for _, p := range progress {
		require.Equal(t, p.HighWatermark, p.IndexedOffset)
		require.Zero(t, p.Lag)
		require.InDelta(t, float64(p.IndexedOffset)/60, p.RecordsPerSecond, 1e-9)
		indexed += p.IndexedOffset
	}
	require.EqualValues(t, 5000, indexed)

	at := clustertest.ScanAll(t, url, "test.history")
	require.EqualValues(t, 5000, at.NumRows())
	seen := map[string]bool{}
	for _, chunk := range clustertest.Column(t, at, "value") {
		for i := 0; i < chunk.Len(); i++ {
			seen[chunk.(*array.String).Value(i)] = true
		}
	}
	require.Len(t, seen, 5000)
	require.True(t, seen["v0"] && seen["v4999"])

	// A table with start latest on the same topic sees only what comes next.
	require.NoError(t, devenv.CreateTable(ctx, url, map[string]any{
		"namespace": "test", "name": "recent", "topic": "history", "value_format": "string", "start": "latest"}))
	require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Value: []byte("new")}).FirstErr())
	rt := clustertest.ScanAll(t, url, "test.recent")
	require.EqualValues(t, 1, rt.NumRows())
	require.Equal(t, "new", clustertest.Column(t, rt, "value")[0].(*array.String).Value(0))
}
