package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/hamba/avro/v2"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"

	"github.com/minkhq/mink/admin"
	"github.com/minkhq/mink/codec/wire"
	"github.com/minkhq/mink/devenv"
	"github.com/minkhq/mink/internal/clustertest"
	"github.com/minkhq/mink/internal/netproxy"
	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/tables"
)

// ordersV1 and ordersV2 are JSON Schemas of a topic's values; v2 adds an
// optional field (an evolution Iceberg allows).
const (
	ordersV1 = `{"type":"object","required":["id"],"properties":{"id":{"type":"integer"},"note":{"type":["string","null"]}}}`
	ordersV2 = `{"type":"object","required":["id"],"properties":{"id":{"type":"integer"},"note":{"type":["string","null"]},"qty":{"type":["integer","null"]}}}`
)

// produceValues produces values to topic's partitions (partition i gets
// values[i]) and waits for the acknowledgements.
func produceValues(t testing.TB, env *devenv.Env, topic string, values map[int32][][]byte) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(env.Brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer cl.Close()
	var recs []*kgo.Record
	for p, vs := range values {
		for _, v := range vs {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: v})
		}
	}
	require.NoError(t, cl.ProduceSync(context.Background(), recs...).FirstErr())
}

// framed returns payload after the wire header of schema id.
func framed(id int, payload string) []byte {
	return append(wire.AppendHeader(nil, id, nil), payload...)
}

// Values that are not in the wire format, or name a schema id the
// registry does not know, or do not decode go to ~dlq with the reason;
// good values around them stay in the table.
func TestRegistryBadInput(t *testing.T) {
	env := startEnv(t, 1)
	url := env.Nodes[0].URL()
	reg := registryClient(t, env)
	require.NoError(t, env.Kafka.CreateTopic("bad", 1, nil))
	// No subject bad-value yet: the table cannot be created.
	err := devenv.CreateTable(context.Background(), url, map[string]any{"namespace": "test", "name": "bad", "topic": "bad", "value_format": "json-schema"})
	require.ErrorContains(t, err, `400 Bad Request: {
  "error": "invalid table definition: subject \"bad-value\" has no schema in the registry"
}`)
	// A subject named explicitly.
	id := register(t, reg, "orders-json", sr.TypeJSON, ordersV1)
	require.NoError(t, devenv.CreateTable(context.Background(), url, map[string]any{"namespace": "test", "name": "bad", "topic": "bad",
		"value_format": "json-schema", "subject": "orders-json"}))

	values := [][]byte{
		framed(id, `{"id":1}`),
		[]byte(`{"id":2}`),            // no header: JSON as is
		{0, 0, 0},                     // shorter than the header
		framed(id+1000, `{"id":4}`),   // unknown schema id
		framed(id, `{"id":5,"note":`), // truncated payload
		framed(id, `{"id":"six"}`),    // corrupt: a string for an integer
		framed(id, "\x00\x01\x02"),    // corrupt: not JSON at all
		framed(id, `{"id":8,"note":"eight"}`),
		nil, // a tombstone
	}
	produceValues(t, env, "bad", map[int32][][]byte{0: values})
	clustertest.WaitCaughtUp(t, url, "test.bad")

	var ids []int64
	eachRow(t, clustertest.ScanAll(t, url, "test.bad"), func(row map[string]any) {
		ids = append(ids, row["id"].(int64))
	})
	require.ElementsMatch(t, []int64{1, 8}, ids)
	got := deadLetterReasons(t, clustertest.ScanAll(t, url, "test.bad~dlq"))
	require.Equal(t, map[pk]string{
		{0, 1}: "value: not in the Schema Registry wire format: first byte is 0x7b, not the magic byte 0",
		{0, 2}: "value: not in the Schema Registry wire format: 3 bytes, shorter than the 5-byte header",
		{0, 3}: fmt.Sprintf("value: schema id %d is not in the schema registry", id+1000),
		{0, 4}: fmt.Sprintf("value (schema id %d): invalid JSON at byte 15: unexpected end of input", id),
		{0, 5}: fmt.Sprintf(`value (schema id %d): field id: cannot convert string "six" to long`, id),
		{0, 6}: fmt.Sprintf("value (schema id %d): invalid JSON at byte 0: not a JSON value", id),
		{0, 8}: "value is null (tombstone); json-schema values must carry a schema id",
	}, got)
}

// The registry unreachable for 30 s while records of a new schema id and
// of a known one come: nothing is dead-lettered, the partition that needs
// the new id waits (mink_partition_schema_wait 1), the other keeps
// indexing and the table keeps loading; every node rebuilds the data files
// of ids already seen without the registry (from the schemas stored in
// Postgres); when the registry returns, indexing resumes and every record
// is in the table once.
func TestRegistryOutage(t *testing.T) {
	registry := srfake.New()
	t.Cleanup(registry.Close)
	proxy, err := netproxy.New(strings.TrimPrefix(registry.URL(), "http://"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = proxy.Close() })
	env, err := devenv.StartEnv(context.Background(), devenv.DevConfig{
		Nodes: 2, PostgresURL: pgtest.Schema(t), EphemeralPorts: true, LeaseTTL: 3 * time.Second,
		SchemaRegistry: "http://" + proxy.Addr(),
	})
	require.NoError(t, err)
	t.Cleanup(env.Stop)
	url := env.Nodes[0].URL()
	reg, err := sr.NewClient(sr.URLs(registry.URL())) // direct, not through the proxy
	require.NoError(t, err)
	v1 := register(t, reg, "orders-value", sr.TypeJSON, ordersV1)
	createTable(t, env, 2, map[string]any{"namespace": "test", "name": "orders", "topic": "orders", "value_format": "json-schema"})

	n := 0
	batch := func(id, count int) [][]byte {
		var out [][]byte
		for i := 0; i < count; i++ {
			n++
			out = append(out, framed(id, fmt.Sprintf(`{"id":%d,"note":"n%d"}`, n, n)))
		}
		return out
	}
	produceValues(t, env, "orders", map[int32][][]byte{0: batch(v1, 50), 1: batch(v1, 50)})
	clustertest.WaitCaughtUp(t, url, "test.orders")
	// A table whose schema id only the node indexing its one partition
	// has met in memory.
	other := register(t, reg, "other-value", sr.TypeJSON, `{"type":"object","properties":{"id":{"type":"integer"},"qty":{"type":"integer"}}}`)
	createTable(t, env, 1, map[string]any{"namespace": "test", "name": "other", "topic": "other", "value_format": "json-schema"})
	produceValues(t, env, "other", map[int32][][]byte{0: {framed(other, `{"id":1,"qty":2}`), framed(other, `{"id":2,"qty":3}`)}})
	clustertest.WaitCaughtUp(t, url, "test.other")

	proxy.Cut()
	cut := time.Now()
	v2 := register(t, reg, "orders-value", sr.TypeJSON, ordersV2)
	produceValues(t, env, "orders", map[int32][][]byte{0: batch(v2, 50), 1: batch(v1, 50)})
	testkit.Eventually(t, 20*time.Second, 200*time.Millisecond, "partition 0 waits for schema id v2", func() (bool, string) {
		m := allMetrics(t, env)
		return strings.Contains(m, `mink_partition_schema_wait{partition="0",table="test.orders"} 1`), grep(m, "mink_partition_schema_wait")
	})
	clustertest.WaitCommitted(t, url, "test.orders", map[int32]int64{1: 100}, 20*time.Second)
	// The table loads and reads while the registry is away, through
	// either node.
	for _, n := range env.Nodes {
		at := clustertest.ScanAll(t, n.URL(), "test.orders")
		require.EqualValues(t, 150, at.NumRows(), "partition 1 whole, partition 0 up to the new schema id")
	}
	// Each node serves every data file of both tables, building those it
	// does not hold from Kafka with the writer schemas stored in Postgres.
	for _, name := range []string{"test.orders", "test.other"} {
		for _, key := range dataFileKeys(t, url, name) {
			for _, n := range env.Nodes {
				fetchObject(t, n, key)
			}
		}
	}
	time.Sleep(30*time.Second - time.Since(cut))
	m := allMetrics(t, env)
	require.Contains(t, m, `mink_partition_schema_wait{partition="0",table="test.orders"} 1`)
	require.NotContains(t, m, `mink_dead_letters_total{partition="0",table="test.orders"}`, "nothing dead-lettered")
	proxy.Restore()

	clustertest.WaitCaughtUp(t, url, "test.orders")
	require.NotContains(t, allMetrics(t, env), `mink_partition_schema_wait{partition="0",table="test.orders"} 1`)
	seen := map[int64]int{}
	eachRow(t, clustertest.ScanAll(t, url, "test.orders"), func(row map[string]any) {
		seen[row["id"].(int64)]++
	})
	require.Len(t, seen, n)
	for id, c := range seen {
		require.Equal(t, 1, c, "id %d", id)
	}
	require.Zero(t, clustertest.ScanAll(t, url, "test.orders~dlq").NumRows())
	st, err := (&admin.Client{URL: url}).TableStatus(context.Background(), "test.orders")
	require.NoError(t, err)
	require.Equal(t, 1, st.SchemaID, "v2 added a column: schema 1")
}

// allMetrics returns the metrics of every node of env, one after the
// other.
func allMetrics(t testing.TB, env *devenv.Env) string {
	var b strings.Builder
	for _, n := range env.Nodes {
		b.WriteString(metrics(t, n.URL()))
	}
	return b.String()
}

// dataFileKeys returns the object keys of the data files of table's
// current snapshot, as iceberg-go plans them.
func dataFileKeys(t testing.TB, url, name string) []string {
	t.Helper()
	ctx := context.Background()
	cat, err := rest.NewCatalog(ctx, "mink", url)
	require.NoError(t, err)
	ns, tn, _ := strings.Cut(name, ".")
	tbl, err := cat.LoadTable(ctx, table.Identifier{ns, tn})
	require.NoError(t, err)
	tasks, err := tbl.Scan().PlanFiles(ctx)
	require.NoError(t, err)
	require.NotEmpty(t, tasks, name)
	var keys []string
	for _, task := range tasks {
		keys = append(keys, tables.Key(task.File.FilePath()))
	}
	return keys
}

func metrics(t testing.TB, url string) string {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

// grep returns the lines of s that contain sub.
func grep(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// `--value-format json --infer`: the schema comes from the retained
// records, and a new field in later records evolves it (a new schema
// version, the new column readable through iceberg-go) with nothing
// dead-lettered.
func TestInferEvolves(t *testing.T) {
	events := testkit.USGSEvents(t)
	env := startEnv(t, 1)
	ctx := context.Background()
	url := env.Nodes[0].URL()
	half := len(events) / 2
	require.NoError(t, env.Kafka.CreateTopic("inferred", 3, nil))
	require.NoError(t, devenv.Produce(ctx, env.Brokers, "inferred", events[:half]))
	require.NoError(t, devenv.CreateTable(ctx, url, map[string]any{
		"namespace": "demo", "name": "inferred", "topic": "inferred", "value_format": "json", "key_format": "string", "infer": true}))
	clustertest.WaitCaughtUp(t, url, "demo.inferred")
	c := &admin.Client{URL: url}
	st, err := c.TableStatus(ctx, "demo.inferred")
	require.NoError(t, err)
	require.Equal(t, 0, st.SchemaID)

	later := make([]devenv.Event, 0, len(events)-half)
	extra := map[string]float64{}
	for i, e := range events[half:] {
		var f map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(e.Value, &f))
		depth := float64(i%100) / 10
		// Always with a fraction ("3.0"): inferred as double from the first.
		f["extra"] = json.RawMessage(fmt.Sprintf(`{"depth_km":%.1f}`, depth))
		extra[e.ID] = depth
		e.Value, err = json.Marshal(f)
		require.NoError(t, err)
		later = append(later, e)
	}
	require.NoError(t, devenv.Produce(ctx, env.Brokers, "inferred", later))
	clustertest.WaitCaughtUp(t, url, "demo.inferred")

	st, err = c.TableStatus(ctx, "demo.inferred")
	require.NoError(t, err)
	require.Equal(t, 1, st.SchemaID, "extra.depth_km made schema 1")
	require.Equal(t, 2, st.SchemaVersions)
	at := clustertest.ScanAll(t, url, "demo.inferred")
	require.EqualValues(t, len(events), at.NumRows())
	byID := map[string]devenv.Event{}
	for _, e := range events[:half] {
		byID[e.ID] = e
	}
	for _, e := range later {
		byID[e.ID] = e
	}
	eachRow(t, at, func(row map[string]any) {
		id := row["id"].(string)
		src, ok := byID[id]
		require.True(t, ok, id)
		if d, ok := extra[id]; ok {
			require.Equal(t, map[string]any{"depth_km": d}, row["extra"], "event %s", id)
		} else {
			require.Nil(t, row["extra"], "event %s", id)
		}
		delete(row, "_kafka")
		dec := json.NewDecoder(bytes.NewReader(src.Value))
		dec.UseNumber()
		var feature any
		require.NoError(t, dec.Decode(&feature))
		if err := compareSource("", row, feature); err != nil {
			t.Fatalf("event %s: %v", id, err)
		}
	})
	require.Zero(t, clustertest.ScanAll(t, url, "demo.inferred~dlq").NumRows())
}

// Truncated and corrupt Avro and Protobuf payloads are dead letters with
// the decoder's reason; the good records around them stay.
func TestRegistryBadPayloads(t *testing.T) {
	env := startEnv(t, 1)
	url := env.Nodes[0].URL()
	reg := registryClient(t, env)
	const proto = `syntax = "proto3"; package e2e; message Order { int64 id = 1; string note = 2; }`
	avroID := register(t, reg, "bad_avro-value", sr.TypeAvro, orderV1)
	protoID := register(t, reg, "bad_proto-value", sr.TypeProtobuf, proto)
	createTable(t, env, 1, map[string]any{"namespace": "test", "name": "bad_avro", "topic": "bad_avro", "value_format": "avro"})
	createTable(t, env, 1, map[string]any{"namespace": "test", "name": "bad_proto", "topic": "bad_proto", "value_format": "protobuf"})

	vs, err := avro.Parse(orderV1)
	require.NoError(t, err)
	good := orderOf(t, 1, 1, vs, avroID)
	produceValues(t, env, "bad_avro", map[int32][][]byte{0: {
		good,
		good[:len(good)-3], // truncated inside code
		append(wire.AppendHeader(nil, avroID, nil), 0x02, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01), // id, then a varint past 64 bits
		append(bytes.Clone(good), 0x00), // a byte past the record
	}})
	pb := func(b ...byte) []byte { return append(wire.AppendHeader(nil, protoID, []int{0}), b...) }
	produceValues(t, env, "bad_proto", map[int32][][]byte{0: {
		pb(0x08, 0x01, 0x12, 0x02, 'h', 'i'), // id 1, note "hi"
		pb(0x08, 0x02, 0x12, 0x05, 'h', 'i'), // note's length past the end
		pb(0x08),                             // a tag without its value
		pb(0x0f, 0x01),                       // wire type 7 does not exist
	}})
	clustertest.WaitCaughtUp(t, url, "test.bad_avro")
	clustertest.WaitCaughtUp(t, url, "test.bad_proto")
	for _, name := range []string{"test.bad_avro", "test.bad_proto"} {
		require.EqualValues(t, 1, clustertest.ScanAll(t, url, name).NumRows(), name)
	}
	require.Equal(t, map[pk]string{
		{0, 1}: fmt.Sprintf("value (schema id %d): field code: truncated payload at byte 3 of 3", avroID),
		{0, 2}: fmt.Sprintf("value (schema id %d): field customer.id: varint at byte 1 overflows a long", avroID),
		{0, 3}: fmt.Sprintf("value (schema id %d): 1 bytes after the value (payload of 7 bytes)", avroID),
	}, deadLetterReasons(t, clustertest.ScanAll(t, url, "test.bad_avro~dlq")))
	require.Equal(t, map[pk]string{
		{0, 1}: fmt.Sprintf("value (schema id %d): field note: length 5 at byte 3 runs past the end (2 bytes left)", protoID),
		{0, 2}: fmt.Sprintf("value (schema id %d): field id: varint at byte 1: unexpected EOF", protoID),
		{0, 3}: fmt.Sprintf("value (schema id %d): field id: wire type invalid (7), want varint (0)", protoID),
	}, deadLetterReasons(t, clustertest.ScanAll(t, url, "test.bad_proto~dlq")))
}
