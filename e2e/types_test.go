package e2e

import (
	"context"
	"fmt"
	"math/big"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/bufbuild/protocompile"
	"github.com/hamba/avro/v2"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/sr"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/minkhq/mink/codec/wire"
	"github.com/minkhq/mink/internal/clustertest"
)

// Every Avro type and logical type of docs/formats.md's Avro mapping,
// written by hamba/avro, stored in Parquet by Mink and read back through
// iceberg-go with the exact value.
func TestAvroTypes(t *testing.T) {
	env := startEnv(t, 1)
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

	got := typeRows(t, url, "test.types")
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

	got := typeRows(t, url, "test.ptypes")
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

	got := typeRows(t, url, "test.jtypes")
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

// typeRows reads a table the way most users do, with iceberg-go's
// Scan.ToArrowTable, and returns its rows by id, _kafka left out. It also
// checks that every map's values are nullable in the Arrow schema:
// iceberg-go v0.7.0 panics on a table whose map values are required.
func typeRows(t *testing.T, url, name string) map[int64]map[string]any {
	t.Helper()
	at := clustertest.ScanAll(t, url, name)
	for _, f := range at.Schema().Fields() {
		requireNullableMapValues(t, f.Name, f.Type)
	}
	got := map[int64]map[string]any{}
	tr := array.NewTableReader(at, -1)
	defer tr.Release()
	for tr.Next() {
		batchRows(t, tr.RecordBatch(), func(row map[string]any) {
			delete(row, "_kafka")
			got[row["id"].(int64)] = row
		})
	}
	require.NoError(t, tr.Err())
	return got
}

func requireNullableMapValues(t *testing.T, path string, dt arrow.DataType) {
	switch dt := dt.(type) {
	case *arrow.MapType:
		require.True(t, dt.ItemField().Nullable, "%s: map values", path)
		requireNullableMapValues(t, path+".value", dt.ItemType())
	case *arrow.ListType:
		requireNullableMapValues(t, path+".element", dt.Elem())
	case *arrow.StructType:
		for _, f := range dt.Fields() {
			requireNullableMapValues(t, path+"."+f.Name, f.Type)
		}
	}
}
