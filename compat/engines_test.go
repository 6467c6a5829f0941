package compat

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"

	"github.com/minkhq/mink/admin"
	"github.com/minkhq/mink/devenv"
	"github.com/minkhq/mink/internal/flights"
	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/internal/realkafka"
	"github.com/minkhq/mink/internal/shareddata"
	"github.com/minkhq/mink/internal/testkit"
)

// engines are run in this order, each from compat/engines/<name>.py.
var engines = []string{"pyiceberg", "duckdb", "spark", "trino"}

// spec is what an engine script is told (compat/engines/README.md).
type spec struct {
	URI        string            `json:"uri"`
	Credential string            `json:"credential"`
	USGS       string            `json:"usgs"`
	Tables     map[string]string `json:"tables"`
	Snapshots  []snapshotSpec    `json:"snapshots"`
	DLQ        dlqSpec           `json:"dlq"`
	Stream     *streamSpec       `json:"stream,omitempty"`
	Flights    *flightsSpec      `json:"flights,omitempty"`
}

// flightsSpec is a json table of the first Rows flight records of the
// Parquet file (internal/flights: its schema and JSON form).
type flightsSpec struct {
	Table   string `json:"table"`
	Parquet string `json:"parquet"`
	Rows    int    `json:"rows"`
}

// flightRows is how many flight records the engines read back.
const flightRows = 50000

// streamSpec is a table for streaming readers (Spark Structured
// Streaming): a string table of an empty topic, and the command (argv)
// that produces its records while the stream runs, printing one JSON
// line per record as compat/clients/produce.py does.
type streamSpec struct {
	Table   string   `json:"table"`
	Produce []string `json:"produce"`
	// PauseS is how long (s) the stream is stopped before its restart.
	PauseS int `json:"pause_s"`
}

// snapshotSpec is one point of the table's history and the event ids it
// holds: Ref is a snapshot id (decimal) or a ref name; AsOfMs a time.
type snapshotSpec struct {
	Ref    *string  `json:"ref"`
	AsOfMs *int64   `json:"as_of_ms"`
	IDs    []string `json:"ids"`
}

type dlqSpec struct {
	Table  string   `json:"table"`
	Values []string `json:"values"`
}

// engineLine is one line an engine script prints: the first names the
// engine and its version, each other one is a check.
type engineLine struct {
	Engine  string  `json:"engine"`
	Version string  `json:"version"`
	Check   string  `json:"check"`
	OK      bool    `json:"ok"`
	Detail  string  `json:"detail"`
	Seconds float64 `json:"seconds"`
}

// TestEngines serves the USGS feed, produced by librdkafka into a real
// broker, from two Mink nodes under access control, with a history (a
// snapshot and a time before the second half of the feed, the tag of a
// consumer group that committed then) and dead letters, and runs each
// engine's checks on it through a reader principal's credential.
func TestEngines(t *testing.T) {
	timePart(t, "engines (one real broker, two Mink nodes under access control, each engine)")
	f := newEngineFixture(t)
	for _, e := range engines {
		script := filepath.Join("engines", e+".py")
		if _, err := os.Stat(script); err != nil {
			matrix.add(row{Component: e, Check: "engine script", Skipped: true, Detail: "no " + script})
			continue
		}
		t.Run(e, func(t *testing.T) { runEngine(t, e, script, f.specFile) })
	}
}

func runEngine(t *testing.T, engine, script, specFile string) {
	start := time.Now()
	out := runPython(t, 20*time.Minute, script, specFile)
	lines := jsonLines[engineLine](t, out)
	if len(lines) == 0 || lines[0].Engine == "" {
		t.Fatalf("%s printed no engine line first: %s", script, tail(string(out), 10))
	}
	name, version := lines[0].Engine, lines[0].Version
	if len(lines) == 1 {
		t.Fatalf("%s ran no check", script)
	}
	for _, l := range lines[1:] {
		matrix.add(row{Component: name, Version: version, Check: l.Check, OK: l.OK, Time: time.Duration(l.Seconds * float64(time.Second)), Detail: l.Detail})
		if !l.OK {
			t.Errorf("%s %s: %s: %s", name, version, l.Check, l.Detail)
		} else {
			t.Logf("%s %s: %s: ok (%.1f s) %s", name, version, l.Check, l.Seconds, l.Detail)
		}
	}
	t.Logf("%s: %d checks in %s", engine, len(lines)-1, time.Since(start).Round(time.Millisecond))
}

type engineFixture struct {
	specFile string
}

// newEngineFixture builds the state every engine reads; see TestEngines.
func newEngineFixture(t *testing.T) *engineFixture {
	ctx := context.Background()
	feed, ok := shareddata.Find("usgs-earthquakes-week.geojson")
	if !ok {
		t.Fatal("the USGS feed (shared/data/usgs-earthquakes-week.geojson) is not found")
	}
	feed, _ = filepath.Abs(feed)
	k := realkafka.Start(t, realkafka.Options{})
	logf, err := os.Create(filepath.Join(t.TempDir(), "mink.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("--- mink log, last lines:\n%s", tail(string(b), 60))
		}
		_ = logf.Close()
	})
	env, err := devenv.StartEnv(ctx, devenv.DevConfig{Nodes: 2, Kafka: k.Addrs(), PostgresURL: pgtest.Schema(t),
		EphemeralPorts: true, Principals: true, LeaseTTL: 3 * time.Second,
		Logger: slog.New(slog.NewTextHandler(io.MultiWriter(logf), &slog.HandlerOptions{Level: slog.LevelInfo}))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(env.Stop)
	url := env.Nodes[0].URL()

	const topic, ns, name = "earthquakes", "compat", "earthquakes"
	k.CreateTopic(topic, 3, 1, nil)
	if err := env.CreateTable(ctx, url, map[string]any{
		"namespace": ns, "name": name, "topic": topic, "value_format": "json", "key_format": "string",
		"schema": json.RawMessage(devenv.EarthquakesSchema), "properties": map[string]string{"mink.group-tags": "billing"},
	}); err != nil {
		t.Fatal(err)
	}
	ids := featureIDs(t, feed)
	half := len(ids) / 2
	const bad = 3
	first := produceUSGS(t, k, topic, feed, 0, half, bad)
	waitCaughtUp(t, url, env.Credential, ns+"."+name)
	// The consumer group billing commits what it read: the first half.
	runPython(t, 2*time.Minute, "clients/commit_group.py", "--bootstrap", strings.Join(k.Addrs(), ","), "--topic", topic, "--group", "billing")
	snap := currentSnapshot(t, url, env.Credential, ns, name)
	produceUSGS(t, k, topic, feed, half, len(ids), 0)
	waitCaughtUp(t, url, env.Credential, ns+"."+name)
	check(t, kafkaComponent(k), librdkafkaVersion(t), "consumer-group tag from a librdkafka group's commits", func(t *testing.T) {
		waitTag(t, url, env.Credential, ns, name, "group.billing")
		got := refIDs(t, url, env.Credential, ns, name, "group.billing")
		if want := ids[:half]; !sameSet(got, want) {
			t.Fatalf("group.billing holds %d events, the group committed after %d", len(got), len(want))
		}
	})

	reader, err := env.CreatePrincipal(ctx, "compat-reader", false, ns+".*")
	if err != nil {
		t.Fatal(err)
	}
	var dead []string
	for _, r := range first {
		if strings.HasPrefix(r.V, "not json") {
			dead = append(dead, r.V)
		}
	}
	if len(dead) != bad {
		t.Fatalf("%d dead letters acknowledged, %d produced", len(dead), bad)
	}
	id := strconv.FormatInt(snap.SnapshotID, 10)
	tag := "group.billing"
	asOf := snap.TimestampMs
	s := spec{URI: url, Credential: reader, USGS: feed,
		Tables: map[string]string{"earthquakes": ns + "." + name},
		Snapshots: []snapshotSpec{
			{Ref: &id, IDs: ids[:half]},
			{Ref: &tag, IDs: ids[:half]},
			{AsOfMs: &asOf, IDs: ids[:half]},
		},
		DLQ: dlqSpec{Table: ns + "." + name + "~dlq", Values: dead},
	}
	// The stream's topic: 3 partitions, a minute of records at 50 a
	// second, produced by the engine while its stream runs (spark.py
	// stops the stream for 70 s on the way). The table keeps its whole
	// history, as README tells for tables read by streams.
	k.CreateTopic("stream", 3, 1, nil)
	if err := env.CreateTable(ctx, url, map[string]any{"namespace": ns, "name": "stream", "topic": "stream", "value_format": "string",
		"properties": map[string]string{"mink.history.thinning": ""}}); err != nil {
		t.Fatal(err)
	}
	produce, _ := filepath.Abs("clients/produce.py")
	s.Stream = &streamSpec{Table: ns + ".stream", Produce: []string{python(t), produce, "stream",
		"--bootstrap", strings.Join(k.Addrs(), ","), "--topic", "stream", "--partitions", "3",
		"--count", "3000", "--rate", "50", "--idempotent"}, PauseS: 70}
	s.Flights = produceFlights(t, k, env, url, ns)
	f := &engineFixture{specFile: filepath.Join(t.TempDir(), "spec.json")}
	writeJSON(t, f.specFile, s)
	t.Logf("compat: %s holds %d events (%d at snapshot %s), %d dead letters; spec %s", ns+"."+name, len(ids), half, id, len(dead), f.specFile)
	return f
}

// produceFlights produces the first flightRows flight records as JSON
// with librdkafka into topic flights, under a json table ns.flights, and
// waits until the table holds them.
func produceFlights(t *testing.T, k *realkafka.Cluster, env *devenv.Env, url, ns string) *flightsSpec {
	path, ok := shareddata.Find(flights.File)
	if !ok {
		t.Fatalf("the flight records (shared/data/%s) are not found", flights.File)
	}
	path, _ = filepath.Abs(path)
	k.CreateTopic("flights", 3, 1, nil)
	if err := env.CreateTable(context.Background(), url, map[string]any{"namespace": ns, "name": "flights", "topic": "flights",
		"value_format": "json", "schema": json.RawMessage(flights.Schema)}); err != nil {
		t.Fatal(err)
	}
	out := runPython(t, 5*time.Minute, "clients/produce.py", "flights", "--bootstrap", strings.Join(k.Addrs(), ","),
		"--topic", "flights", "--parquet", path, "--count", strconv.Itoa(flightRows), "--rate", "0", "--idempotent", "--compression", "lz4")
	if n := bytes.Count(out, []byte("\n")); n != flightRows || bytes.Contains(out, []byte(`"failed": true`)) {
		t.Fatalf("%d flight records acknowledged of %d (or some failed)", n, flightRows)
	}
	waitCaughtUp(t, url, env.Credential, ns+".flights")
	return &flightsSpec{Table: ns + ".flights", Parquet: path, Rows: flightRows}
}

// featureIDs returns the event ids of the feed, in order.
func featureIDs(t *testing.T, path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var fc struct {
		Features []struct {
			ID string `json:"id"`
		} `json:"features"`
	}
	if err := json.Unmarshal(b, &fc); err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(fc.Features))
	for i, f := range fc.Features {
		ids[i] = f.ID
	}
	return ids
}

// produced is one line of compat/clients/produce.py.
type produced struct {
	P       int32  `json:"p"`
	O       int64  `json:"o"`
	V       string `json:"v"`
	Aborted bool   `json:"aborted"`
	Failed  bool   `json:"failed"`
	Error   string `json:"error"`
}

// produceUSGS produces features [from, to) of the feed and bad values
// that are not JSON with librdkafka, and returns what was acknowledged;
// a failed delivery fails the test.
func produceUSGS(t *testing.T, k *realkafka.Cluster, topic, feed string, from, to, bad int) []produced {
	out := runPython(t, 2*time.Minute, "clients/produce.py", "usgs", "--bootstrap", strings.Join(k.Addrs(), ","),
		"--topic", topic, "--geojson", feed, "--from", strconv.Itoa(from), "--to", strconv.Itoa(to),
		"--bad", strconv.Itoa(bad), "--idempotent", "--compression", "zstd")
	recs := jsonLines[produced](t, out)
	for _, r := range recs {
		if r.Failed {
			t.Fatalf("produce %q failed: %s", r.V, r.Error)
		}
	}
	if len(recs) != to-from+bad {
		t.Fatalf("%d records acknowledged, %d produced", len(recs), to-from+bad)
	}
	return recs
}

func restCatalog(t *testing.T, url, credential string) *rest.Catalog {
	cat, err := rest.NewCatalog(context.Background(), "mink", url, rest.WithCredential(credential))
	if err != nil {
		t.Fatalf("catalog: %v", err)
	}
	return cat
}

// currentSnapshot loads the table (a zero-lag load: every acknowledged
// record is in its snapshot) and returns its current snapshot.
func currentSnapshot(t *testing.T, url, credential, ns, name string) table.Snapshot {
	tbl, err := restCatalog(t, url, credential).LoadTable(context.Background(), table.Identifier{ns, name})
	if err != nil {
		t.Fatal(err)
	}
	s := tbl.CurrentSnapshot()
	if s == nil {
		t.Fatalf("%s.%s has no snapshot", ns, name)
	}
	return *s
}

// refIDs reads the event ids of the snapshot of ref with iceberg-go.
func refIDs(t *testing.T, url, credential, ns, name, ref string) []string {
	ctx := context.Background()
	tbl, err := restCatalog(t, url, credential).LoadTable(ctx, table.Identifier{ns, name})
	if err != nil {
		t.Fatal(err)
	}
	s := tbl.Metadata().SnapshotByName(ref)
	if s == nil {
		t.Fatalf("no ref %s", ref)
	}
	at, err := tbl.Scan(table.WithSnapshotID(s.SnapshotID), table.WithSelectedFields("id")).ToArrowTable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	var out []string
	for _, c := range at.Column(0).Data().Chunks() {
		col, ok := c.(interface{ ValueStr(int) string })
		if !ok {
			t.Fatalf("id column of type %s", c.DataType())
		}
		for i := 0; i < c.Len(); i++ {
			out = append(out, col.ValueStr(i))
		}
	}
	return out
}

// sameSet says whether a and b hold the same strings, each once.
func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	m := make(map[string]int, len(a))
	for _, s := range a {
		m[s]++
	}
	for _, s := range b {
		if m[s] != 1 {
			return false
		}
		m[s]--
	}
	return true
}

// waitTag waits until the table's metadata has ref name.
func waitTag(t *testing.T, url, credential, ns, name, ref string) {
	deadline := time.Now().Add(60 * time.Second)
	for {
		tbl, err := restCatalog(t, url, credential).LoadTable(context.Background(), table.Identifier{ns, name})
		if err == nil && tbl.Metadata().SnapshotByName(ref) != nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s.%s has no ref %s after 60 s (%v)", ns, name, ref, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitCaughtUp waits until every partition of table (ns.name) has records
// and is committed up to its high watermark, as the admin API says.
func waitCaughtUp(t *testing.T, url, credential, tableName string) {
	ops := &admin.Client{URL: url, Credential: credential}
	testkit.Eventually(t, 90*time.Second, 100*time.Millisecond, tableName+" committed up to the high watermark", func() (bool, string) {
		p, err := ops.Partitions(context.Background(), tableName)
		if err != nil {
			return false, err.Error()
		}
		for _, q := range p.Partitions {
			if q.HighWatermark == 0 || q.CommittedOffset < q.HighWatermark {
				return false, fmt.Sprintf("%+v", p.Partitions)
			}
		}
		return len(p.Partitions) > 0, fmt.Sprintf("%+v", p.Partitions)
	})
}
