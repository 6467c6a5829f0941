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
	"github.com/minkhq/mink/objects"
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
			b := fetchObject(t, n.URL(), key)
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

// fetchObject reads an object of the S3 API from the node at url itself
// (not forwarded to the node that owns it).
func fetchObject(t testing.TB, url, key string) []byte {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url+"/mink/"+key, nil)
	require.NoError(t, err)
	req.Header.Set(objects.ForwardedHeader, "e2e")
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

// Every Avro type and logical type of docs/formats.md's Avro mapping,
// written by hamba/avro, stored in Parquet by Mink and read back through
// iceberg-go with the exact value.
func TestAvroTypes(t *testing.T) {
	env := startEnv(t, 1)
	ctx := context.Background()
	url := env.Nodes[0].URL()
	reg := registryClient(t, env)
	const schema = `{"type":"record","name":"All","namespace":"e2e","fields":[
 {"name":"id","type":"long"},
 {"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":10,"scale":2}},
 {"name":"big","type":{"type":"fixed","name":"Big","size":16,"logicalType":"decimal","precision":38,"scale":6}},
 {"name":"uid","type":{"type":"string","logicalType":"uuid"}},
 {"name":"day","type":{"type":"int","logicalType":"date"}},
 {"name":"tod_ms","type":{"type":"int","logicalType":"time-millis"}},
 {"name":"tod_us","type":{"type":"long","logicalType":"time-micros"}},
 {"name":"ts_ms","type":{"type":"long","logicalType":"timestamp-millis"}},
 {"name":"ts_us","type":{"type":"long","logicalType":"timestamp-micros"}},
 {"name":"lts_ms","type":{"type":"long","logicalType":"local-timestamp-millis"}},
 {"name":"lts_us","type":{"type":"long","logicalType":"local-timestamp-micros"}},
 {"name":"color","type":{"type":"enum","name":"Color","symbols":["RED","GREEN"]}},
 {"name":"hash","type":{"type":"fixed","name":"Hash","size":4}},
 {"name":"blob","type":"bytes"},
 {"name":"f","type":"float"},
 {"name":"ok","type":"boolean"},
 {"name":"counts","type":{"type":"map","values":"long"}},
 {"name":"names","type":{"type":"array","items":["null","string"]}},
 {"name":"choice","type":["null","long","string"]}
]}`
	id := register(t, reg, "types-value", sr.TypeAvro, schema)
	s, err := avro.Parse(schema)
	require.NoError(t, err)
	createTable(t, env, 1, map[string]any{"namespace": "test", "name": "types", "topic": "types", "value_format": "avro"})

	huge, ok := new(big.Rat).SetString("-12345678901234567890123456789012.345678")
	require.True(t, ok)
	ts := time.Date(2024, 2, 29, 23, 59, 58, 123456000, time.UTC)
	records := []map[string]any{{
		"id": int64(1), "amount": big.NewRat(-12345, 100), "big": huge, "uid": "0f8fad5b-d9cb-469f-a165-70867728950e",
		"day": time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC), "tod_ms": 23*time.Hour + 59*time.Minute + 999*time.Millisecond,
		"tod_us": 12*time.Hour + 345678*time.Microsecond, "ts_ms": ts.Truncate(time.Millisecond), "ts_us": ts,
		"lts_ms": ts.Truncate(time.Millisecond), "lts_us": ts, "color": "GREEN", "hash": [4]byte{0, 0xff, 1, 2},
		"blob": []byte{}, "f": float32(1.1), "ok": true, "counts": map[string]any{"a": int64(1), "b": int64(-1 << 62)},
		"names": []any{"x", nil, "z"}, "choice": map[string]any{"string": "s"},
	}, {
		"id": int64(2), "amount": big.NewRat(0, 1), "big": new(big.Rat), "uid": "00000000-0000-0000-0000-000000000000",
		"day": time.Unix(0, 0).UTC(), "tod_ms": time.Duration(0), "tod_us": time.Duration(0), "ts_ms": time.UnixMilli(-1).UTC(),
		"ts_us": time.UnixMicro(-1).UTC(), "lts_ms": time.UnixMilli(0).UTC(), "lts_us": time.UnixMicro(1).UTC(), "color": "RED",
		"hash": [4]byte{}, "blob": []byte{1, 2, 3}, "f": float32(-0.5), "ok": false, "counts": map[string]any{},
		"names": []any{}, "choice": map[string]any{"long": int64(-7)},
	}, {
		"id": int64(3), "amount": big.NewRat(99999999, 100), "big": new(big.Rat), "uid": "ffffffff-ffff-ffff-ffff-ffffffffffff",
		"day": time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC), "tod_ms": time.Duration(0), "tod_us": 24*time.Hour - time.Microsecond,
		"ts_ms": ts, "ts_us": ts, "lts_ms": ts, "lts_us": ts, "color": "RED", "hash": [4]byte{}, "blob": []byte{},
		"f": float32(0), "ok": true, "counts": map[string]any{}, "names": []any{}, "choice": nil,
	}}
	var values [][]byte
	for _, r := range records {
		b, err := avro.Marshal(s, r)
		require.NoError(t, err, "record %v", r["id"])
		values = append(values, append(wire.AppendHeader(nil, id, nil), b...))
	}
	produceValues(t, env, "types", map[int32][][]byte{0: values})
	clustertest.WaitCaughtUp(t, url, "test.types")
	require.Zero(t, clustertest.ScanAll(t, url, "test.types~dlq").NumRows(), "%v", deadLetterReasons(t, clustertest.ScanAll(t, url, "test.types~dlq")))

	// Read batch by batch: iceberg-go v0.7.0's ToArrowTable cannot read a
	// map whose values are required (its projection rebuilds the map type
	// with arrow.MapOfWithMetadata, which makes the values nullable, and
	// the table's chunks then mismatch its schema), though the Parquet
	// file declares the value required as the Iceberg schema does.
	got := map[int64]map[string]any{}
	cat, err := rest.NewCatalog(ctx, "mink", url)
	require.NoError(t, err)
	tbl, err := cat.LoadTable(ctx, table.Identifier{"test", "types"})
	require.NoError(t, err)
	_, batches, err := tbl.Scan().ToArrowRecords(ctx)
	require.NoError(t, err)
	for rec, err := range batches {
		require.NoError(t, err)
		batchRows(t, rec, func(row map[string]any) {
			delete(row, "_kafka")
			got[row["id"].(int64)] = row
		})
		rec.Release()
	}
	require.Len(t, got, 3)
	tsUS := ts.UnixMicro()
	tsMS := ts.Truncate(time.Millisecond).UnixMicro()
	require.Equal(t, map[string]any{
		"id": int64(1), "amount": "-123.45", "big": "-12345678901234567890123456789012.345678", "uid": "0f8fad5b-d9cb-469f-a165-70867728950e",
		"day": int64(-1), "tod_ms": int64((23*time.Hour + 59*time.Minute + 999*time.Millisecond) / time.Microsecond),
		"tod_us": int64((12*time.Hour + 345678*time.Microsecond) / time.Microsecond), "ts_ms": timestampMicros{tsMS}, "ts_us": timestampMicros{tsUS},
		"lts_ms": timestampMicros{tsMS}, "lts_us": timestampMicros{tsUS}, "color": "GREEN", "hash": []byte{0, 0xff, 1, 2},
		"blob": []byte{}, "f": float64(float32(1.1)), "ok": true, "counts": map[string]any{"a": int64(1), "b": int64(-1 << 62)},
		"names": []any{"x", nil, "z"}, "choice": map[string]any{"tag": int64(1), "field0": nil, "field1": "s"},
	}, got[1])
	require.Equal(t, map[string]any{
		"id": int64(2), "amount": "0.00", "big": "0.000000", "uid": "00000000-0000-0000-0000-000000000000",
		"day": int64(0), "tod_ms": int64(0), "tod_us": int64(0), "ts_ms": timestampMicros{-1000}, "ts_us": timestampMicros{-1},
		"lts_ms": timestampMicros{0}, "lts_us": timestampMicros{1}, "color": "RED", "hash": []byte{0, 0, 0, 0},
		"blob": []byte{1, 2, 3}, "f": -0.5, "ok": false, "counts": map[string]any{},
		"names": []any{}, "choice": map[string]any{"tag": int64(0), "field0": int64(-7), "field1": nil},
	}, got[2])
	require.Equal(t, "999999.99", got[3]["amount"])
	require.Equal(t, int64(2932896), got[3]["day"])
	require.Equal(t, int64(24*time.Hour/time.Microsecond-1), got[3]["tod_us"])
	require.Nil(t, got[3]["choice"])
}

// The Protobuf mapping end to end: well-known types, wrappers, enums
// (an open enum's unknown number too), repeated, maps, oneof, unsigned
// integers, nested messages; written by dynamicpb, read back through
// iceberg-go with the exact value.
func TestProtobufTypes(t *testing.T) {
	env := startEnv(t, 1)
	ctx := context.Background()
	url := env.Nodes[0].URL()
	reg := registryClient(t, env)
	const text = `syntax = "proto3"; package e2e;
import "google/protobuf/timestamp.proto"; import "google/protobuf/wrappers.proto"; import "google/protobuf/duration.proto";
enum Color { RED = 0; GREEN = 1; }
message All {
  int64 id = 1;
  google.protobuf.Timestamp at = 2;
  google.protobuf.Int32Value maybe = 3;
  google.protobuf.StringValue label = 4;
  google.protobuf.DoubleValue score = 5;
  Color color = 6;
  repeated string tags = 7;
  map<string, int64> counts = 8;
  oneof choice { string text = 9; int64 number = 10; }
  uint64 big = 11;
  uint32 small = 12;
  sint32 neg = 13;
  bytes blob = 14;
  bool ok = 15;
  float f = 16;
  google.protobuf.Duration took = 17;
  Inner inner = 18;
  repeated Inner inners = 19;
}
message Inner { string name = 1; }`
	id := register(t, reg, "ptypes-value", sr.TypeProtobuf, text)
	comp := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
		Accessor: protocompile.SourceAccessorFromMap(map[string]string{"all.proto": text})})}
	files, err := comp.Compile(ctx, "all.proto")
	require.NoError(t, err)
	desc := files[0].Messages().ByName("All")
	createTable(t, env, 1, map[string]any{"namespace": "test", "name": "ptypes", "topic": "ptypes", "value_format": "protobuf"})
	var values [][]byte
	for _, js := range []string{
		`{"id":"1","at":"2024-02-29T23:59:58.123456Z","maybe":5,"label":"x","score":1.5,"color":"GREEN","tags":["a","b"],
		  "counts":{"a":"1","b":"-4611686018427387904"},"text":"hi","big":"18446744073709551615","small":4294967295,"neg":-5,
		  "blob":"AQID","ok":true,"f":1.25,"took":"-1.000001s","inner":{"name":"n"},"inners":[{"name":"a"},{}]}`,
		`{"id":"2"}`,
		`{"id":"3","maybe":0,"label":"","number":"-7","color":7,"at":"1969-12-31T23:59:59.999999Z"}`,
	} {
		msg := dynamicpb.NewMessage(desc)
		require.NoError(t, protojson.Unmarshal([]byte(js), msg))
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(msg)
		require.NoError(t, err)
		values = append(values, append(wire.AppendHeader(nil, id, []int{0}), b...))
	}
	produceValues(t, env, "ptypes", map[int32][][]byte{0: values})
	clustertest.WaitCaughtUp(t, url, "test.ptypes")
	require.Zero(t, clustertest.ScanAll(t, url, "test.ptypes~dlq").NumRows(), "%v", deadLetterReasons(t, clustertest.ScanAll(t, url, "test.ptypes~dlq")))

	got := map[int64]map[string]any{}
	cat, err := rest.NewCatalog(ctx, "mink", url)
	require.NoError(t, err)
	tbl, err := cat.LoadTable(ctx, table.Identifier{"test", "ptypes"})
	require.NoError(t, err)
	_, batches, err := tbl.Scan().ToArrowRecords(ctx) // not ToArrowTable: see TestAvroTypes
	require.NoError(t, err)
	for rec, err := range batches {
		require.NoError(t, err)
		batchRows(t, rec, func(row map[string]any) {
			delete(row, "_kafka")
			got[row["id"].(int64)] = row
		})
		rec.Release()
	}
	at := time.Date(2024, 2, 29, 23, 59, 58, 123456000, time.UTC).UnixMicro()
	require.Equal(t, map[string]any{
		"id": int64(1), "at": timestampMicros{at}, "maybe": int64(5), "label": "x", "score": 1.5, "color": "GREEN",
		"tags": []any{"a", "b"}, "counts": map[string]any{"a": int64(1), "b": int64(-1 << 62)}, "text": "hi", "number": nil,
		"big": "18446744073709551615", "small": int64(4294967295), "neg": int64(-5), "blob": []byte{1, 2, 3}, "ok": true,
		"f": 1.25, "took": int64(-1000001), "inner": map[string]any{"name": "n"},
		"inners": []any{map[string]any{"name": "a"}, map[string]any{"name": ""}},
	}, got[1])
	require.Equal(t, map[string]any{
		"id": int64(2), "at": nil, "maybe": nil, "label": nil, "score": nil, "color": "RED",
		"tags": []any{}, "counts": map[string]any{}, "text": nil, "number": nil,
		"big": "0", "small": int64(0), "neg": int64(0), "blob": []byte{}, "ok": false,
		"f": 0.0, "took": nil, "inner": nil, "inners": []any{},
	}, got[2])
	require.Equal(t, int64(0), got[3]["maybe"], "a wrapper present with its zero value is not null")
	require.Equal(t, "", got[3]["label"])
	require.Equal(t, int64(-7), got[3]["number"])
	require.Nil(t, got[3]["text"])
	require.Equal(t, "7", got[3]["color"], "an open enum's unknown number is kept as its text")
	require.Equal(t, timestampMicros{-1}, got[3]["at"])
}

// The JSON Schema mapping end to end: objects, arrays, required,
// formats date-time, date, time, uuid, base64 content, maps
// (additionalProperties), enums, $ref; read back through iceberg-go with
// the exact value; a value its format refuses is a dead letter.
func TestJSONSchemaTypes(t *testing.T) {
	env := startEnv(t, 1)
	ctx := context.Background()
	url := env.Nodes[0].URL()
	reg := registryClient(t, env)
	const schema = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","required":["id","at"],
 "$defs":{"inner":{"type":"object","properties":{"name":{"type":"string"}}}},
 "properties":{
  "id":{"type":"integer"},
  "at":{"type":"string","format":"date-time"},
  "day":{"type":["string","null"],"format":"date"},
  "tod":{"type":"string","format":"time"},
  "uid":{"type":"string","format":"uuid"},
  "blob":{"type":"string","contentEncoding":"base64"},
  "score":{"type":"number"},
  "ok":{"type":"boolean"},
  "color":{"enum":["RED","GREEN"]},
  "tags":{"type":"array","items":{"type":"string"}},
  "counts":{"type":"object","additionalProperties":{"type":"integer"}},
  "inner":{"$ref":"#/$defs/inner"}}}`
	id := register(t, reg, "jtypes-value", sr.TypeJSON, schema)
	createTable(t, env, 1, map[string]any{"namespace": "test", "name": "jtypes", "topic": "jtypes", "value_format": "json-schema"})
	var values [][]byte
	for _, js := range []string{
		`{"id":1,"at":"2024-02-29T23:59:58.123456+01:00","day":"2024-02-29","tod":"23:59:59.999999","uid":"0F8FAD5B-D9CB-469F-A165-70867728950E",
		  "blob":"AQID","score":1e-7,"ok":true,"color":"GREEN","tags":["a","b"],"counts":{"a":1,"b":-9223372036854775808},"inner":{"name":"n"}}`,
		`{"id":2,"at":"1970-01-01T00:00:00Z","day":null}`,
		`{"id":3,"at":"2024-02-29T23:59:58.1234567Z"}`,           // finer than µs: a dead letter
		`{"id":4,"at":"2024-02-29T23:59:58Z","tod":"12:00:00Z"}`, // a zone on a time: a dead letter
	} {
		values = append(values, framed(id, js))
	}
	produceValues(t, env, "jtypes", map[int32][][]byte{0: values})
	clustertest.WaitCaughtUp(t, url, "test.jtypes")
	require.Equal(t, map[pk]string{
		{0, 2}: fmt.Sprintf(`value (schema id %d): field at: cannot convert string "2024-02-29T23:59:58.1234567Z" to timestamptz: finer than microseconds`, id),
		{0, 3}: fmt.Sprintf(`value (schema id %d): field tod: cannot convert string "12:00:00Z" to time: want HH:MM:SS[.ffffff]`, id),
	}, deadLetterReasons(t, clustertest.ScanAll(t, url, "test.jtypes~dlq")))

	got := map[int64]map[string]any{}
	cat, err := rest.NewCatalog(ctx, "mink", url)
	require.NoError(t, err)
	tbl, err := cat.LoadTable(ctx, table.Identifier{"test", "jtypes"})
	require.NoError(t, err)
	_, batches, err := tbl.Scan().ToArrowRecords(ctx) // not ToArrowTable: see TestAvroTypes
	require.NoError(t, err)
	for rec, err := range batches {
		require.NoError(t, err)
		batchRows(t, rec, func(row map[string]any) {
			delete(row, "_kafka")
			got[row["id"].(int64)] = row
		})
		rec.Release()
	}
	require.Len(t, got, 2)
	require.Equal(t, map[string]any{
		"id": int64(1), "at": timestampMicros{time.Date(2024, 2, 29, 22, 59, 58, 123456000, time.UTC).UnixMicro()},
		"day": int64(19782), "tod": int64(24*time.Hour/time.Microsecond - 1), "uid": "0f8fad5b-d9cb-469f-a165-70867728950e",
		"blob": []byte{1, 2, 3}, "score": 1e-7, "ok": true, "color": "GREEN", "tags": []any{"a", "b"},
		"counts": map[string]any{"a": int64(1), "b": int64(-1 << 63)}, "inner": map[string]any{"name": "n"},
	}, got[1])
	require.Equal(t, map[string]any{
		"id": int64(2), "at": timestampMicros{0}, "day": nil, "tod": nil, "uid": nil, "blob": nil, "score": nil, "ok": nil,
		"color": nil, "tags": nil, "counts": nil, "inner": nil,
	}, got[2])
}
