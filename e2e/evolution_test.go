package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/bufbuild/protocompile"
	"github.com/hamba/avro/v2"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/minkhq/mink/admin"
	"github.com/minkhq/mink/codec/wire"
	"github.com/minkhq/mink/devenv"
	"github.com/minkhq/mink/internal/cli"
	"github.com/minkhq/mink/internal/clustertest"
	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/node"
	"github.com/minkhq/mink/tables"
)

// mink runs the mink command line in process against url's admin API
// and returns its output; a non-zero exit fails the test.
func mink(t testing.TB, url string, args ...string) string {
	t.Helper()
	var out, errs bytes.Buffer
	code := cli.Main(append(args, "--admin", url), &out, &errs)
	require.Zero(t, code, "mink %s: %s%s", strings.Join(args, " "), out.String(), errs.String())
	return out.String()
}

// Issue 11's evolution sequence, in Avro (field docs/formats.md
// "Schema evolution"): v1 {id, customer{id}, qty int, code string} → v2
// adds customer.details{name} (a nested optional add) → v3 widens qty to
// long → v4 makes code an int, which Iceberg refuses.
const (
	orderV1 = `{"type":"record","name":"Order","namespace":"e2e","fields":[
 {"name":"id","type":"long"},
 {"name":"customer","type":{"type":"record","name":"Customer","fields":[{"name":"id","type":"long"}]}},
 {"name":"qty","type":"int"},
 {"name":"code","type":"string"}]}`
	orderV2 = `{"type":"record","name":"Order","namespace":"e2e","fields":[
 {"name":"id","type":"long"},
 {"name":"customer","type":{"type":"record","name":"Customer","fields":[{"name":"id","type":"long"},
   {"name":"details","type":["null",{"type":"record","name":"Details","fields":[{"name":"name","type":"string"}]}],"default":null}]}},
 {"name":"qty","type":"int"},
 {"name":"code","type":"string"}]}`
	orderV3 = `{"type":"record","name":"Order","namespace":"e2e","fields":[
 {"name":"id","type":"long"},
 {"name":"customer","type":{"type":"record","name":"Customer","fields":[{"name":"id","type":"long"},
   {"name":"details","type":["null",{"type":"record","name":"Details","fields":[{"name":"name","type":"string"}]}],"default":null}]}},
 {"name":"qty","type":"long"},
 {"name":"code","type":"string"}]}`
	orderV4 = `{"type":"record","name":"Order","namespace":"e2e","fields":[
 {"name":"id","type":"long"},
 {"name":"customer","type":{"type":"record","name":"Customer","fields":[{"name":"id","type":"long"},
   {"name":"details","type":["null",{"type":"record","name":"Details","fields":[{"name":"name","type":"string"}]}],"default":null}]}},
 {"name":"qty","type":"long"},
 {"name":"code","type":"int"}]}`
)

// order is what each version writes (hamba/avro: a field the schema
// lacks is ignored; a nil Details is the union's null).
type order struct {
	ID       int64    `avro:"id"`
	Customer customer `avro:"customer"`
	Qty      any      `avro:"qty"`  // int32 (v1, v2) or int64 (v3, v4)
	Code     any      `avro:"code"` // string, or int32 in v4
}

type customer struct {
	ID      int64    `avro:"id"`
	Details *details `avro:"details"`
}

type details struct {
	Name string `avro:"name"`
}

// orderOf returns record id written by version v (1-4) and its Avro
// binary after the wire header of schema id.
func orderOf(t testing.TB, v, id int, schema avro.Schema, schemaID int) []byte {
	t.Helper()
	o := order{ID: int64(id), Customer: customer{ID: int64(id) * 10}, Qty: int32(id), Code: fmt.Sprintf("c%d", id)}
	if v >= 2 {
		o.Customer.Details = &details{Name: fmt.Sprintf("n%d", id)}
	}
	if v >= 3 {
		o.Qty = int64(id) + 1<<33 // past an int
	}
	if v == 4 {
		o.Code = int32(id)
	}
	b, err := avro.Marshal(schema, o)
	require.NoError(t, err)
	return append(wire.AppendHeader(nil, schemaID, nil), b...)
}

func TestAvroEvolution(t *testing.T) {
	// Three nodes: each decides the writer schemas of the partitions it
	// indexes, and serves files built by the others.
	env := startEnv(t, 3)
	ctx := context.Background()
	url := env.Nodes[0].URL()
	reg := registryClient(t, env)
	const subject = "orders-value"
	texts := []string{orderV1, orderV2, orderV3, orderV4}
	ids := make([]int, 4)
	parsed := make([]avro.Schema, 4)
	for i, text := range texts {
		var err error
		parsed[i], err = avro.Parse(text)
		require.NoError(t, err)
	}
	// srfake checks no compatibility: Mink decides by Iceberg's rules
	// whatever the registry holds.
	ids[0] = register(t, reg, subject, sr.TypeAvro, orderV1)
	require.NoError(t, env.Kafka.CreateTopic("orders", 3, nil))
	mink(t, url, "table", "create", "shop.orders", "--topic", "orders", "--value-format", "avro")

	cl, err := kgo.NewClient(kgo.SeedBrokers(env.Brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer cl.Close()
	version := map[int]int{} // record id → version
	next := 0
	produce := func(v int, p int32) *kgo.Record {
		next++
		version[next] = v
		return &kgo.Record{Topic: "orders", Partition: p, Value: orderOf(t, v, next, parsed[v-1], ids[v-1])}
	}
	// v1 first, indexed and committed before any evolution.
	var recs []*kgo.Record
	for i := 0; i < 30; i++ {
		recs = append(recs, produce(1, int32(i%3)))
	}
	require.NoError(t, cl.ProduceSync(ctx, recs...).FirstErr())
	clustertest.WaitCaughtUp(t, url, "shop.orders")

	for i := 1; i < 4; i++ {
		ids[i] = register(t, reg, subject, sr.TypeAvro, texts[i])
	}
	// Then every version interleaved on every partition.
	recs = nil
	for i := 0; i < 120; i++ {
		recs = append(recs, produce(1+i%4, int32((i/4)%3)))
	}
	require.NoError(t, cl.ProduceSync(ctx, recs...).FirstErr())
	clustertest.WaitCaughtUp(t, url, "shop.orders")

	// Every v1-v3 record reads correctly under the final schema (through
	// another node than the one the table was created on).
	seen := map[int64]bool{}
	eachRow(t, clustertest.ScanAll(t, env.Nodes[2].URL(), "shop.orders"), func(row map[string]any) {
		id := row["id"].(int64)
		v := version[int(id)]
		require.NotEqual(t, 4, v, "record %d of v4 in the table", id)
		require.False(t, seen[id], "record %d twice", id)
		seen[id] = true
		qty := id
		if v >= 3 {
			qty += 1 << 33
		}
		want := map[string]any{"id": id, "customer": map[string]any{"id": id * 10, "details": nil}, "qty": qty, "code": fmt.Sprintf("c%d", id)}
		if v >= 2 {
			want["customer"].(map[string]any)["details"] = map[string]any{"name": fmt.Sprintf("n%d", id)}
		}
		delete(row, "_kafka")
		require.Equal(t, want, row, "record %d (v%d)", id, v)
	})
	want := 0
	for _, v := range version {
		if v != 4 {
			want++
		}
	}
	require.Len(t, seen, want)

	// v4's records are dead letters naming the field and Iceberg's rule.
	reason := fmt.Sprintf("value: schema id %d: field code: table has string, schema has int; "+
		"Iceberg allows only int→long, float→double, wider decimal precision and required→optional", ids[3])
	dead := deadLetterReasons(t, clustertest.ScanAll(t, url, "shop.orders~dlq"))
	require.Len(t, dead, 30)
	for k, r := range dead {
		require.Equal(t, reason, r, "dead letter %v", k)
	}

	// Iceberg metadata: schemas 0, 1, 2; current 2; field ids kept.
	cat, err := rest.NewCatalog(ctx, "mink", url)
	require.NoError(t, err)
	tbl, err := cat.LoadTable(ctx, table.Identifier{"shop", "orders"})
	require.NoError(t, err)
	var schemaIDs []int
	for _, s := range tbl.Metadata().Schemas() {
		schemaIDs = append(schemaIDs, s.ID)
	}
	require.Equal(t, []int{0, 1, 2}, schemaIDs)
	cur := tbl.Metadata().CurrentSchema()
	require.Equal(t, 2, cur.ID)
	for _, c := range []struct {
		path string
		id   int
		typ  iceberg.Type
	}{
		{"id", 11, iceberg.PrimitiveTypes.Int64}, {"customer.id", 13, iceberg.PrimitiveTypes.Int64},
		{"qty", 14, iceberg.PrimitiveTypes.Int64}, {"code", 15, iceberg.PrimitiveTypes.String},
		{"customer.details.name", 17, iceberg.PrimitiveTypes.String},
	} {
		f, ok := cur.FindFieldByName(c.path)
		require.True(t, ok, c.path)
		require.Equal(t, c.id, f.ID, c.path)
		require.True(t, c.typ.Equals(f.Type), "%s: %s", c.path, f.Type)
	}
	// Each data file records its schema version in its key: the files of
	// v1's records, indexed before any evolution, stay schema 0 and are
	// read above through their field ids.
	tasks, err := tbl.Scan().PlanFiles(ctx)
	require.NoError(t, err)
	bySchema := map[int]int{}
	for _, task := range tasks {
		ref, ok := tables.ParseDataFileKey(tables.Key(task.File.FilePath()))
		require.True(t, ok, task.File.FilePath())
		if ref.End <= 10 {
			require.Zero(t, ref.Schema, task.File.FilePath())
		}
		bySchema[ref.Schema]++
	}
	require.GreaterOrEqual(t, bySchema[0], 3, "schema-0 files: at least one per partition")
	require.NotZero(t, bySchema[2], "files of the interleaved versions: schema 2")
	// Every node serves each file with the same bytes, built from Kafka
	// with the schema version its key names when it is not in its cache.
	for _, task := range tasks {
		key := tables.Key(task.File.FilePath())
		var first []byte
		for _, n := range env.Nodes {
			b := fetchObject(t, n, key)
			require.EqualValues(t, task.File.FileSizeBytes(), len(b), "%s on %s", key, n.ID())
			if first == nil {
				first = b
			}
			require.Equal(t, first, b, "%s differs on %s", key, n.ID())
		}
	}
	qty0, _ := tbl.Metadata().Schemas()[0].FindFieldByName("qty")
	require.Equal(t, iceberg.PrimitiveTypes.Int32, qty0.Type, "schema 0 keeps qty int")

	// Status lists the four writer schemas, the fourth with its error.
	st, err := (&admin.Client{URL: url}).TableStatus(ctx, "shop.orders")
	require.NoError(t, err)
	require.Len(t, st.WriterSchemas, 4)
	for i, w := range st.WriterSchemas {
		require.Equal(t, ids[i], w.RegistryID)
		require.Equal(t, "value", w.Role)
		if i < 3 {
			require.NotNil(t, w.SchemaID, "writer %d", ids[i])
			require.Equal(t, i, *w.SchemaID)
			require.Empty(t, w.Error)
		} else {
			require.Nil(t, w.SchemaID)
			require.Equal(t, reason, w.Error)
		}
	}
	out := mink(t, url, "table", "status", "shop.orders")
	require.Contains(t, out, "schema: version 2 (3 versions)")
	require.Contains(t, out, "field code: table has string, schema has int")
}

// A key in each registry format with an Avro value: _kafka.key keeps the
// key's bytes, the top-level key column holds the decoded key; a null key
// is a null key column; a key not in the wire format makes the record a
// dead letter.
func TestRegistryKeys(t *testing.T) {
	env := startEnv(t, 1)
	ctx := context.Background()
	url := env.Nodes[0].URL()
	reg := registryClient(t, env)
	vs, err := avro.Parse(orderV1)
	require.NoError(t, err)
	const avroKey = `{"type":"record","name":"OrderKey","namespace":"e2e","fields":[{"name":"id","type":"string"}]}`
	ks, err := avro.Parse(avroKey)
	require.NoError(t, err)
	for _, c := range []struct {
		format string
		typ    sr.SchemaType
		schema string
		encode func(id int, s string) []byte // the key after its header
	}{
		{"avro", sr.TypeAvro, avroKey, func(id int, s string) []byte {
			b, err := avro.Marshal(ks, map[string]any{"id": s})
			require.NoError(t, err)
			return append(wire.AppendHeader(nil, id, nil), b...)
		}},
		{"protobuf", sr.TypeProtobuf, `syntax = "proto3"; package e2e; message OrderKey { string id = 1; }`, func(id int, s string) []byte {
			return append(append(wire.AppendHeader(nil, id, []int{0}), 0x0a, byte(len(s))), s...)
		}},
		{"json-schema", sr.TypeJSON, `{"type":"object","required":["id"],"properties":{"id":{"type":"string"}}}`, func(id int, s string) []byte {
			return append(wire.AppendHeader(nil, id, nil), fmt.Sprintf(`{"id":%q}`, s)...)
		}},
	} {
		t.Run(c.format, func(t *testing.T) {
			topic := "keyed_" + tableSafe(c.format)
			keyID := register(t, reg, topic+"-key", c.typ, c.schema)
			valueID := register(t, reg, topic+"-value", sr.TypeAvro, orderV1)
			require.NoError(t, env.Kafka.CreateTopic(topic, 2, nil))
			name := "shop." + topic
			mink(t, url, "table", "create", name, "--topic", topic, "--value-format", "avro", "--key-format", c.format)

			keys := map[int64][]byte{}
			var recs []*kgo.Record
			for i := 1; i <= 40; i++ {
				key := c.encode(keyID, fmt.Sprintf("k%d", i))
				switch i {
				case 7:
					key = nil
				case 9:
					key = []byte("plain")
				}
				keys[int64(i)] = key
				recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(i % 2), Key: key, Value: orderOf(t, 1, i, vs, valueID)})
			}
			cl, err := kgo.NewClient(kgo.SeedBrokers(env.Brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
			require.NoError(t, err)
			defer cl.Close()
			require.NoError(t, cl.ProduceSync(ctx, recs...).FirstErr())
			clustertest.WaitCaughtUp(t, url, name)

			n := 0
			eachRow(t, clustertest.ScanAll(t, url, name), func(row map[string]any) {
				n++
				id := row["id"].(int64)
				kafka := row["_kafka"].(map[string]any)
				if id == 7 {
					require.Nil(t, kafka["key"])
					require.Nil(t, row["key"])
					return
				}
				require.Equal(t, keys[id], kafka["key"], "record %d: _kafka.key keeps the bytes", id)
				require.Equal(t, map[string]any{"id": fmt.Sprintf("k%d", id)}, row["key"], "record %d: key column", id)
			})
			require.Equal(t, 39, n)
			dead := deadLetterReasons(t, clustertest.ScanAll(t, url, name+"~dlq"))
			require.Equal(t, map[pk]string{{1, 4}: "key: not in the Schema Registry wire format: first byte is 0x70, not the magic byte 0"}, dead)
		})
	}
}

// Zero-lag loads evolve the schema too: with the writer committing only
// once a minute, each load builds tail files, and a load that meets a new
// writer schema (v2: customer.details) commits the new schema version with
// its tail; the v1 tail files before it read under it through their field
// ids.
func TestAvroEvolutionZeroLag(t *testing.T) {
	env, err := devenv.StartEnv(context.Background(), devenv.DevConfig{
		Nodes: 1, PostgresURL: pgtest.Schema(t), EphemeralPorts: true, LeaseTTL: 3 * time.Second,
		CommitInterval: time.Minute,
	})
	require.NoError(t, err)
	t.Cleanup(env.Stop)
	ctx := context.Background()
	url := env.Nodes[0].URL()
	reg := registryClient(t, env)
	v1 := register(t, reg, "lag-value", sr.TypeAvro, orderV1)
	s1, err := avro.Parse(orderV1)
	require.NoError(t, err)
	s2, err := avro.Parse(orderV2)
	require.NoError(t, err)
	createTable(t, env, 1, map[string]any{"namespace": "shop", "name": "lag", "topic": "lag", "value_format": "avro"})
	cl, err := kgo.NewClient(kgo.SeedBrokers(env.Brokers...), kgo.DefaultProduceTopic("lag"))
	require.NoError(t, err)
	defer cl.Close()
	require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Value: orderOf(t, 1, 1, s1, v1)}, &kgo.Record{Value: orderOf(t, 1, 2, s1, v1)}).FirstErr())
	require.EqualValues(t, 2, clustertest.ScanAll(t, url, "shop.lag").NumRows())

	v2 := register(t, reg, "lag-value", sr.TypeAvro, orderV2)
	require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Value: orderOf(t, 2, 3, s2, v2)}).FirstErr())
	got := map[int64]any{}
	eachRow(t, clustertest.ScanAll(t, url, "shop.lag"), func(row map[string]any) {
		got[row["id"].(int64)] = row["customer"].(map[string]any)["details"]
	})
	require.Equal(t, map[int64]any{1: nil, 2: nil, 3: map[string]any{"name": "n3"}}, got)

	cat, err := rest.NewCatalog(ctx, "mink", url)
	require.NoError(t, err)
	tbl, err := cat.LoadTable(ctx, table.Identifier{"shop", "lag"})
	require.NoError(t, err)
	require.Equal(t, 1, tbl.Metadata().CurrentSchema().ID)
	require.Len(t, tbl.Metadata().Schemas(), 2)
	st, err := (&admin.Client{URL: url}).TableStatus(ctx, "shop.lag")
	require.NoError(t, err)
	require.Equal(t, 1, st.SchemaID)
	for _, p := range st.Partitions {
		require.Zero(t, p.CommittedOffset, "the writer has not committed: the rows came from tail files")
	}
}

// fetchObject reads an object of the S3 API from node n itself (not
// forwarded to the node that owns it).
func fetchObject(t testing.TB, n *node.Node, key string) []byte {
	t.Helper()
	url := n.URL()
	req, err := http.NewRequest(http.MethodGet, url+"/mink/"+key, nil)
	require.NoError(t, err)
	n.SignForward(req)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s on %s: %s", key, url, b)
	return b
}

// The evolution sequence in Protobuf: the same four versions as
// TestAvroEvolution, as .proto files (proto3 scalars without presence are
// required columns; messages are optional).
func TestProtobufEvolution(t *testing.T) {
	env := startEnv(t, 1)
	ctx := context.Background()
	url := env.Nodes[0].URL()
	reg := registryClient(t, env)
	const head = `syntax = "proto3"; package e2e; `
	texts := []string{
		head + `message Order { int64 id = 1; Customer customer = 2; int32 qty = 3; string code = 4; } message Customer { int64 id = 1; }`,
		head + `message Order { int64 id = 1; Customer customer = 2; int32 qty = 3; string code = 4; } message Customer { int64 id = 1; Details details = 2; } message Details { string name = 1; }`,
		head + `message Order { int64 id = 1; Customer customer = 2; int64 qty = 3; string code = 4; } message Customer { int64 id = 1; Details details = 2; } message Details { string name = 1; }`,
		head + `message Order { int64 id = 1; Customer customer = 2; int64 qty = 3; int32 code = 4; } message Customer { int64 id = 1; Details details = 2; } message Details { string name = 1; }`,
	}
	ids := make([]int, 4)
	descs := make([]protoreflect.MessageDescriptor, 4)
	for i, text := range texts {
		comp := protocompile.Compiler{Resolver: &protocompile.SourceResolver{
			Accessor: protocompile.SourceAccessorFromMap(map[string]string{"order.proto": text})}}
		files, err := comp.Compile(ctx, "order.proto")
		require.NoError(t, err)
		descs[i] = files[0].Messages().ByName("Order")
	}
	encode := func(v, id int) []byte {
		js := fmt.Sprintf(`{"id":%d,"customer":{"id":%d},"qty":%d,"code":"c%d"}`, id, id*10, id, id)
		switch v {
		case 2:
			js = fmt.Sprintf(`{"id":%d,"customer":{"id":%d,"details":{"name":"n%d"}},"qty":%d,"code":"c%d"}`, id, id*10, id, id, id)
		case 3:
			js = fmt.Sprintf(`{"id":%d,"customer":{"id":%d,"details":{"name":"n%d"}},"qty":%d,"code":"c%d"}`, id, id*10, id, int64(id)+1<<33, id)
		case 4:
			js = fmt.Sprintf(`{"id":%d,"customer":{"id":%d,"details":{"name":"n%d"}},"qty":%d,"code":%d}`, id, id*10, id, int64(id)+1<<33, id)
		}
		msg := dynamicpb.NewMessage(descs[v-1])
		require.NoError(t, protojson.Unmarshal([]byte(js), msg))
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(msg)
		require.NoError(t, err)
		return append(wire.AppendHeader(nil, ids[v-1], []int{0}), b...)
	}

	ids[0] = register(t, reg, "porders-value", sr.TypeProtobuf, texts[0])
	require.NoError(t, env.Kafka.CreateTopic("porders", 2, nil))
	mink(t, url, "table", "create", "shop.porders", "--topic", "porders", "--value-format", "protobuf")
	version := map[int64]int{}
	next := 0
	values := func(vs ...int) map[int32][][]byte {
		out := map[int32][][]byte{}
		for i, v := range vs {
			next++
			version[int64(next)] = v
			out[int32(i%2)] = append(out[int32(i%2)], encode(v, next))
		}
		return out
	}
	produceValues(t, env, "porders", values(1, 1, 1, 1))
	clustertest.WaitCaughtUp(t, url, "shop.porders")
	for i := 1; i < 4; i++ {
		ids[i] = register(t, reg, "porders-value", sr.TypeProtobuf, texts[i])
	}
	// Each partition meets v2 before v3 (partition i%2): versions are made
	// in the order writers are met, and a v3 met first would add
	// customer.details and widen qty in one version.
	produceValues(t, env, "porders", values(1, 2, 2, 1, 3, 4, 4, 3, 1, 2, 3, 4))
	clustertest.WaitCaughtUp(t, url, "shop.porders")

	n := 0
	eachRow(t, clustertest.ScanAll(t, url, "shop.porders"), func(row map[string]any) {
		n++
		id := row["id"].(int64)
		v := version[id]
		require.NotEqual(t, 4, v, "record %d of v4 in the table", id)
		qty := id
		if v >= 3 {
			qty += 1 << 33
		}
		want := map[string]any{"id": id, "customer": map[string]any{"id": id * 10, "details": nil}, "qty": qty, "code": fmt.Sprintf("c%d", id)}
		if v >= 2 {
			want["customer"].(map[string]any)["details"] = map[string]any{"name": fmt.Sprintf("n%d", id)}
		}
		delete(row, "_kafka")
		require.Equal(t, want, row, "record %d (v%d)", id, v)
	})
	require.Equal(t, 13, n)
	dead := deadLetterReasons(t, clustertest.ScanAll(t, url, "shop.porders~dlq"))
	require.Len(t, dead, 3)
	for k, r := range dead {
		require.Equal(t, fmt.Sprintf("value: schema id %d: field code: table has string, schema has int; "+
			"Iceberg allows only int→long, float→double, wider decimal precision and required→optional", ids[3]), r, "dead letter %v", k)
	}
	st, err := (&admin.Client{URL: url}).TableStatus(ctx, "shop.porders")
	require.NoError(t, err)
	require.Equal(t, 2, st.SchemaID)
	require.Equal(t, 3, st.SchemaVersions)
}

// The other changes Iceberg allows, in one Avro step: float→double,
// wider decimal precision, required→optional, and a dropped field, which
// keeps its column and reads null for the new records.
func TestAvroEvolutionRules(t *testing.T) {
	env := startEnv(t, 1)
	ctx := context.Background()
	url := env.Nodes[0].URL()
	reg := registryClient(t, env)
	const v1 = `{"type":"record","name":"R","namespace":"e2e","fields":[
 {"name":"id","type":"long"},
 {"name":"f","type":"float"},
 {"name":"d","type":{"type":"bytes","logicalType":"decimal","precision":5,"scale":2}},
 {"name":"r","type":"string"},
 {"name":"gone","type":"string"}]}`
	const v2 = `{"type":"record","name":"R","namespace":"e2e","fields":[
 {"name":"id","type":"long"},
 {"name":"f","type":"double"},
 {"name":"d","type":{"type":"bytes","logicalType":"decimal","precision":10,"scale":2}},
 {"name":"r","type":["null","string"],"default":null}]}`
	id1 := register(t, reg, "rules-value", sr.TypeAvro, v1)
	createTable(t, env, 1, map[string]any{"namespace": "test", "name": "rules", "topic": "rules", "value_format": "avro"})
	id2 := register(t, reg, "rules-value", sr.TypeAvro, v2)
	s1, err := avro.Parse(v1)
	require.NoError(t, err)
	s2, err := avro.Parse(v2)
	require.NoError(t, err)
	enc := func(s avro.Schema, id int, v map[string]any) []byte {
		b, err := avro.Marshal(s, v)
		require.NoError(t, err)
		return append(wire.AppendHeader(nil, id, nil), b...)
	}
	produceValues(t, env, "rules", map[int32][][]byte{0: {
		enc(s1, id1, map[string]any{"id": int64(1), "f": float32(1.1), "d": big.NewRat(-99999, 100), "r": "a", "gone": "g"}),
		enc(s2, id2, map[string]any{"id": int64(2), "f": 1.1, "d": big.NewRat(-9999999999, 100), "r": nil}),
		enc(s2, id2, map[string]any{"id": int64(3), "f": 0.1, "d": big.NewRat(1, 100), "r": map[string]any{"string": "c"}}),
	}})
	clustertest.WaitCaughtUp(t, url, "test.rules")
	require.Zero(t, clustertest.ScanAll(t, url, "test.rules~dlq").NumRows())
	got := map[int64]map[string]any{}
	eachRow(t, clustertest.ScanAll(t, url, "test.rules"), func(row map[string]any) {
		delete(row, "_kafka")
		got[row["id"].(int64)] = row
	})
	require.Equal(t, map[int64]map[string]any{
		1: {"id": int64(1), "f": float64(float32(1.1)), "d": "-999.99", "r": "a", "gone": "g"},
		2: {"id": int64(2), "f": 1.1, "d": "-99999999.99", "r": nil, "gone": nil},
		3: {"id": int64(3), "f": 0.1, "d": "0.01", "r": "c", "gone": nil},
	}, got)

	cat, err := rest.NewCatalog(ctx, "mink", url)
	require.NoError(t, err)
	tbl, err := cat.LoadTable(ctx, table.Identifier{"test", "rules"})
	require.NoError(t, err)
	cur := tbl.Metadata().CurrentSchema()
	require.Equal(t, 1, cur.ID)
	for name, want := range map[string]struct {
		typ      iceberg.Type
		required bool
	}{
		"f": {iceberg.PrimitiveTypes.Float64, true}, "d": {iceberg.DecimalTypeOf(10, 2), true},
		"r": {iceberg.PrimitiveTypes.String, false}, "gone": {iceberg.PrimitiveTypes.String, false},
	} {
		f, ok := cur.FindFieldByName(name)
		require.True(t, ok, name)
		require.True(t, want.typ.Equals(f.Type), "%s: %s", name, f.Type)
		require.Equal(t, want.required, f.Required, name)
	}
}
