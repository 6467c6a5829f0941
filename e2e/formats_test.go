package e2e

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/bufbuild/protocompile"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/sr"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/minkhq/mink/codec/wire"
	"github.com/minkhq/mink/devenv"
	"github.com/minkhq/mink/internal/clustertest"
	"github.com/minkhq/mink/internal/testkit"
)

// The USGS feed's features in Protobuf and in JSON Schema, equivalent to
// devenv/earthquakes.schema.json (devenv/earthquakes.avsc is the Avro one).
var (
	//go:embed testdata/earthquakes.proto
	earthquakesProto string
	//go:embed testdata/earthquakes.schema.json
	earthquakesJSONSchema string
)

// registryClient is a franz-go Schema Registry client of the env's
// registry (srfake over HTTP).
func registryClient(t testing.TB, env *devenv.Env) *sr.Client {
	t.Helper()
	cl, err := sr.NewClient(sr.URLs(env.RegistryURL))
	require.NoError(t, err)
	return cl
}

// register registers schema text of type typ under subject and returns
// its id.
func register(t testing.TB, cl *sr.Client, subject string, typ sr.SchemaType, text string) int {
	t.Helper()
	id, err := cl.RegisterSchema(context.Background(), subject, sr.Schema{Schema: text, Type: typ}, -1, -1)
	require.NoError(t, err, "register %s", subject)
	return id
}

// TestUSGSFormats indexes the USGS feed in each registry format and reads
// every table back through iceberg-go: every record once, and every field
// of every row equal to the GeoJSON feature it came from.
func TestUSGSFormats(t *testing.T) {
	events := testkit.USGSEvents(t)
	require.Len(t, events, 1707)
	env := startEnv(t, 1)
	ctx := context.Background()
	url := env.Nodes[0].URL()
	reg := registryClient(t, env)

	encode := map[string]func(t *testing.T) []devenv.Event{
		"avro": func(t *testing.T) []devenv.Event {
			id := register(t, reg, "quakes_avro-value", sr.TypeAvro, devenv.EarthquakesAvro)
			out, err := devenv.AvroEvents(events, id)
			require.NoError(t, err)
			return out
		},
		"protobuf": func(t *testing.T) []devenv.Event {
			id := register(t, reg, "quakes_protobuf-value", sr.TypeProtobuf, earthquakesProto)
			return protobufEvents(t, events, id)
		},
		"json-schema": func(t *testing.T) []devenv.Event {
			id := register(t, reg, "quakes_json-schema-value", sr.TypeJSON, earthquakesJSONSchema)
			out := make([]devenv.Event, len(events))
			for i, e := range events {
				e.Value = append(wire.AppendHeader(nil, id, nil), e.Value...)
				out[i] = e
			}
			return out
		},
	}
	for _, format := range []string{"avro", "protobuf", "json-schema"} {
		t.Run(format, func(t *testing.T) {
			topic := "quakes_" + format
			encoded := encode[format](t)
			require.NoError(t, env.Kafka.CreateTopic(topic, 3, nil))
			name := "demo.quakes_" + tableSafe(format)
			mink(t, url, "table", "create", name, "--topic", topic, "--value-format", format, "--key-format", "string")
			require.NoError(t, devenv.Produce(ctx, env.Brokers, topic, encoded))
			clustertest.WaitCaughtUp(t, url, name)
			checkUSGSTable(t, clustertest.ScanAll(t, url, name), events)
			dlq := clustertest.ScanAll(t, url, name+"~dlq")
			require.Zero(t, dlq.NumRows(), "dead letters: %v", deadLetterReasons(t, dlq))
		})
	}
}

func tableSafe(format string) string {
	if format == "json-schema" {
		return "json_schema"
	}
	return format
}

// protobufEvents returns events with each Value replaced by the feature
// in Protobuf (testdata/earthquakes.proto, message Earthquake, encoded
// through dynamicpb from the descriptor protocompile compiles) after the
// wire header of schema id and message index [0].
func protobufEvents(t testing.TB, events []devenv.Event, id int) []devenv.Event {
	t.Helper()
	comp := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
		Accessor: protocompile.SourceAccessorFromMap(map[string]string{"earthquakes.proto": earthquakesProto}),
	})}
	files, err := comp.Compile(context.Background(), "earthquakes.proto")
	require.NoError(t, err)
	desc := files[0].Messages().ByName("Earthquake")
	require.NotNil(t, desc)
	out := make([]devenv.Event, len(events))
	for i, e := range events {
		out[i] = e
		out[i].Value = append(wire.AppendHeader(nil, id, []int{0}), protobufFeature(t, desc, e)...)
	}
	return out
}

// protobufFeature encodes one GeoJSON feature as message desc: the JSON
// with its epoch-millisecond times rewritten as RFC 3339 (what protojson
// takes for a google.protobuf.Timestamp), read by protojson into a
// dynamicpb message (a JSON null leaves an optional field unset).
func protobufFeature(t testing.TB, desc protoreflect.MessageDescriptor, e devenv.Event) []byte {
	dec := json.NewDecoder(bytes.NewReader(e.Value))
	dec.UseNumber()
	var f map[string]any
	require.NoError(t, dec.Decode(&f))
	props := f["properties"].(map[string]any)
	for _, k := range []string{"time", "updated"} {
		if n, ok := props[k].(json.Number); ok {
			ms, err := n.Int64()
			require.NoError(t, err)
			props[k] = time.UnixMilli(ms).UTC().Format(time.RFC3339Nano)
		}
	}
	js, err := json.Marshal(f)
	require.NoError(t, err)
	msg := dynamicpb.NewMessage(desc)
	require.NoError(t, protojson.Unmarshal(js, msg), "event %s", e.ID)
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(msg)
	require.NoError(t, err)
	return b
}

// checkUSGSTable checks that at holds each event once, keyed by its id,
// and that every column of every row equals the GeoJSON feature
// (compareSource).
func checkUSGSTable(t testing.TB, at arrow.Table, events []devenv.Event) {
	t.Helper()
	require.EqualValues(t, len(events), at.NumRows())
	byID := map[string]devenv.Event{}
	for _, e := range events {
		byID[e.ID] = e
	}
	seen := map[string]bool{}
	eachRow(t, at, func(row map[string]any) {
		kafka := row["_kafka"].(map[string]any)
		id := row["id"].(string)
		require.False(t, seen[id], "event %s twice", id)
		seen[id] = true
		src, ok := byID[id]
		require.True(t, ok, "unknown event %s", id)
		require.Equal(t, id, kafka["key"], "event %s: _kafka.key (key format string)", id)
		require.Equal(t, src.Time.UnixMicro(), kafka["timestamp"].(timestampMicros).v, "event %s: _kafka.timestamp", id)
		delete(row, "_kafka")
		dec := json.NewDecoder(bytes.NewReader(src.Value))
		dec.UseNumber()
		var feature any
		require.NoError(t, dec.Decode(&feature))
		if err := compareSource("", row, feature); err != nil {
			t.Fatalf("event %s: %v", id, err)
		}
	})
	require.Len(t, seen, len(events))
}

// timestampMicros is a timestamp or timestamptz value read back: µs since
// the epoch.
type timestampMicros struct{ v int64 }

// eachRow calls f with each row of at as Go values: a struct as
// map[string]any, a list as []any, a map (string keys) as map[string]any,
// int32, int64, date (days) and time (µs) as int64, floats as float64,
// strings, binary and fixed as []byte, bool, a decimal as its text with
// its scale's digits, a uuid as its text, a timestamp as timestampMicros,
// null as nil.
func eachRow(t testing.TB, at arrow.Table, f func(row map[string]any)) {
	t.Helper()
	tr := array.NewTableReader(at, 0)
	defer tr.Release()
	for tr.Next() {
		batchRows(t, tr.RecordBatch(), f)
	}
	require.NoError(t, tr.Err())
}

// batchRows calls f with each row of rec, as eachRow does.
func batchRows(t testing.TB, rec arrow.RecordBatch, f func(row map[string]any)) {
	for i := 0; i < int(rec.NumRows()); i++ {
		row := map[string]any{}
		for c, field := range rec.Schema().Fields() {
			row[field.Name] = arrowValue(t, rec.Column(c), i)
		}
		f(row)
	}
}

func arrowValue(t testing.TB, a arrow.Array, i int) any {
	if a.IsNull(i) {
		return nil
	}
	switch a := a.(type) {
	case *array.Struct:
		st := a.DataType().(*arrow.StructType)
		m := make(map[string]any, st.NumFields())
		for j, f := range st.Fields() {
			m[f.Name] = arrowValue(t, a.Field(j), i)
		}
		return m
	case *array.List:
		start, end := a.ValueOffsets(i)
		out := []any{}
		for j := start; j < end; j++ {
			out = append(out, arrowValue(t, a.ListValues(), int(j)))
		}
		return out
	case *array.Int32:
		return int64(a.Value(i))
	case *array.Int64:
		return a.Value(i)
	case *array.Float32:
		return float64(a.Value(i))
	case *array.Float64:
		return a.Value(i)
	case *array.Boolean:
		return a.Value(i)
	case *array.String:
		return a.Value(i)
	case *array.Binary:
		return bytes.Clone(a.Value(i))
	case *array.Decimal128:
		return a.Value(i).ToString(a.DataType().(*arrow.Decimal128Type).Scale)
	case *array.Date32:
		return int64(a.Value(i))
	case *array.Time64:
		require.Equal(t, arrow.Microsecond, a.DataType().(*arrow.Time64Type).Unit)
		return int64(a.Value(i))
	case *extensions.UUIDArray:
		return a.Value(i).String()
	case *array.FixedSizeBinary:
		return bytes.Clone(a.Value(i))
	case *array.Map:
		start, end := a.ValueOffsets(i)
		out := map[string]any{}
		for j := start; j < end; j++ {
			out[arrowValue(t, a.Keys(), int(j)).(string)] = arrowValue(t, a.Items(), int(j))
		}
		return out
	case *array.Timestamp:
		require.Equal(t, arrow.Microsecond, a.DataType().(*arrow.TimestampType).Unit)
		return timestampMicros{int64(a.Value(i))}
	}
	t.Fatalf("arrowValue: type %s", a.DataType())
	return nil
}

// compareSource compares a value read back (arrowValue) with the JSON
// value it was decoded from (decoded with UseNumber): the same fields (a
// column the JSON lacks must be null; a JSON key without a column is a
// dropped field), integers exact, doubles bit for bit, and a timestamp
// equal to the JSON's epoch milliseconds.
func compareSource(path string, got, src any) error {
	at := func() string {
		if path == "" {
			return "value"
		}
		return "field " + path
	}
	if src == nil {
		if got != nil {
			return fmt.Errorf("%s: %v, want null", at(), got)
		}
		return nil
	}
	if got == nil {
		return fmt.Errorf("%s: null, want %v", at(), src)
	}
	switch src := src.(type) {
	case map[string]any:
		m, ok := got.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: %T, want an object", at(), got)
		}
		for k, v := range src {
			g, ok := m[k]
			if !ok {
				return fmt.Errorf("%s: key %q has no column", at(), k)
			}
			if err := compareSource(join(path, k), g, v); err != nil {
				return err
			}
		}
		for k, g := range m {
			if _, ok := src[k]; !ok && g != nil {
				return fmt.Errorf("field %s: %v, absent from the source", join(path, k), g)
			}
		}
	case []any:
		l, ok := got.([]any)
		if !ok || len(l) != len(src) {
			return fmt.Errorf("%s: %v, want %v", at(), got, src)
		}
		for i := range src {
			if err := compareSource(fmt.Sprintf("%s[%d]", path, i), l[i], src[i]); err != nil {
				return err
			}
		}
	case json.Number:
		switch g := got.(type) {
		case int64:
			if want, err := strconv.ParseInt(src.String(), 10, 64); err != nil || want != g {
				return fmt.Errorf("%s: %d, want %s", at(), g, src)
			}
		case float64:
			if want, err := strconv.ParseFloat(src.String(), 64); err != nil || want != g {
				return fmt.Errorf("%s: %v, want %s", at(), g, src)
			}
		case timestampMicros:
			if want, err := strconv.ParseInt(src.String(), 10, 64); err != nil || want*1000 != g.v {
				return fmt.Errorf("%s: %s, want %s ms", at(), time.UnixMicro(g.v).UTC(), src)
			}
		default:
			return fmt.Errorf("%s: %T %v, want the number %s", at(), got, got, src)
		}
	case string, bool:
		if got != src {
			return fmt.Errorf("%s: %v, want %v", at(), got, src)
		}
	default:
		return fmt.Errorf("%s: source %T", at(), src)
	}
	return nil
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

// deadLetterReasons returns the reasons of a ~dlq table's rows by
// partition/offset.
func deadLetterReasons(t testing.TB, dlq arrow.Table) map[pk]string {
	t.Helper()
	out := map[pk]string{}
	eachRow(t, dlq, func(row map[string]any) {
		k := row["_kafka"].(map[string]any)
		out[pk{int32(k["partition"].(int64)), k["offset"].(int64)}] = row["error"].(string)
	})
	return out
}

// The `mink dev` demo: demo.earthquakes (json) and demo.earthquakes_avro
// (the same feed in Avro, its schema from the registry) both read back
// equal to the GeoJSON.
func TestDemoAvro(t *testing.T) {
	events := testkit.USGSEvents(t)
	env := startEnv(t, 1)
	url := env.Nodes[0].URL()
	note, err := devenv.Demo(context.Background(), env, events)
	require.NoError(t, err)
	require.Empty(t, note)
	for _, name := range []string{"demo.earthquakes", "demo." + devenv.AvroTopic} {
		clustertest.WaitCaughtUp(t, url, name)
		checkUSGSTable(t, clustertest.ScanAll(t, url, name), events)
		require.Zero(t, clustertest.ScanAll(t, url, name+"~dlq").NumRows(), name)
	}
}

// compareSource finds each kind of difference (the check of
// TestUSGSFormats must not pass vacuously).
func TestCompareSource(t *testing.T) {
	src := func(s string) any {
		dec := json.NewDecoder(strings.NewReader(s))
		dec.UseNumber()
		var v any
		require.NoError(t, dec.Decode(&v))
		return v
	}
	feature := `{"id":"a","p":{"mag":2,"n":5,"t":1517966773840,"s":"x"},"c":[1.5,2]}`
	row := func() map[string]any {
		return map[string]any{"id": "a", "p": map[string]any{"mag": 2.0, "n": int64(5), "t": timestampMicros{1517966773840000}, "s": "x", "extra": nil},
			"c": []any{1.5, 2.0}}
	}
	require.NoError(t, compareSource("", row(), src(feature)))
	for _, c := range []struct {
		edit func(map[string]any)
		err  string
	}{
		{func(r map[string]any) { r["p"].(map[string]any)["mag"] = 2.5 }, "field p.mag: 2.5, want 2"},
		{func(r map[string]any) { r["p"].(map[string]any)["n"] = int64(6) }, "field p.n: 6, want 5"},
		{func(r map[string]any) { r["p"].(map[string]any)["t"] = timestampMicros{1517966773840001} }, "field p.t: 2018-02-07 01:26:13.840001 +0000 UTC, want 1517966773840 ms"},
		{func(r map[string]any) { r["p"].(map[string]any)["s"] = nil }, "field p.s: null, want x"},
		{func(r map[string]any) { delete(r["p"].(map[string]any), "s") }, `field p: key "s" has no column`},
		{func(r map[string]any) { r["p"].(map[string]any)["extra"] = "y" }, "field p.extra: y, absent from the source"},
		{func(r map[string]any) { r["c"] = []any{1.5} }, "field c: [1.5], want [1.5 2]"},
		{func(r map[string]any) { r["p"].(map[string]any)["n"] = "5" }, "field p.n: string 5, want the number 5"},
	} {
		r := row()
		c.edit(r)
		require.EqualError(t, compareSource("", r, src(feature)), c.err)
	}
}
