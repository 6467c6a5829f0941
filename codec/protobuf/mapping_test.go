package protobuf_test

import (
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/minkhq/mink/codec/protobuf"
)

const allProto = `syntax = "proto3";
package t;
import "google/protobuf/timestamp.proto";
import "google/protobuf/duration.proto";
import "google/protobuf/wrappers.proto";
import "google/protobuf/any.proto";

message All {
  enum Color { RED = 0; GREEN = 1; }
  int32 i32 = 1;
  sint32 s32 = 2;
  sfixed32 sf32 = 3;
  int64 i64 = 4;
  sint64 s64 = 5;
  sfixed64 sf64 = 6;
  uint32 u32 = 7;
  fixed32 f32 = 8;
  uint64 u64 = 9;
  fixed64 f64 = 10;
  bool b = 11;
  float fl = 12;
  double db = 13;
  string s = 14;
  bytes by = 15;
  Color color = 16;
  optional int32 opt = 17;
  Inner inner = 18;
  repeated int32 nums = 19;
  repeated Inner inners = 20;
  map<string, int64> counts = 21;
  map<int32, Inner> by_id = 22;
  oneof choice {
    string name = 23;
    int64 number = 24;
  }
  google.protobuf.Timestamp ts = 25;
  google.protobuf.Duration dur = 26;
  google.protobuf.DoubleValue w_double = 27;
  google.protobuf.FloatValue w_float = 28;
  google.protobuf.Int64Value w_int64 = 29;
  google.protobuf.UInt64Value w_uint64 = 30;
  google.protobuf.Int32Value w_int32 = 31;
  google.protobuf.UInt32Value w_uint32 = 32;
  google.protobuf.BoolValue w_bool = 33;
  google.protobuf.StringValue w_string = 34;
  google.protobuf.BytesValue w_bytes = 35;
  google.protobuf.Any any = 36;
  repeated google.protobuf.Timestamp times = 37;
}

message Inner {
  string id = 1;
}
`

// TestConvertAll pins the Iceberg type of every mapping row of
// docs/formats-protobuf.md.
func TestConvertAll(t *testing.T) {
	typ, err := protobuf.Convert(schema(allProto), nil)
	require.NoError(t, err)
	require.Equal(t, "struct<"+
		"1: i32: required int, 2: s32: required int, 3: sf32: required int, "+
		"4: i64: required long, 5: s64: required long, 6: sf64: required long, "+
		"7: u32: required long, 8: f32: required long, "+
		"9: u64: required decimal(20, 0), 10: f64: required decimal(20, 0), "+
		"11: b: required boolean, 12: fl: required float, 13: db: required double, "+
		"14: s: required string, 15: by: required binary, 16: color: required string, "+
		"17: opt: optional int, "+
		"18: inner: optional struct<19: id: required string>, "+
		"20: nums: required list<int>, "+
		"22: inners: required list<struct<24: id: required string>>, "+
		"25: counts: required map<string, long>, "+
		"28: by_id: required map<int, struct<31: id: required string>>, "+
		"32: name: optional string, 33: number: optional long, "+
		"34: ts: optional timestamptz, 35: dur: optional long, "+
		"36: w_double: optional double, 37: w_float: optional float, "+
		"38: w_int64: optional long, 39: w_uint64: optional decimal(20, 0), "+
		"40: w_int32: optional int, 41: w_uint32: optional long, "+
		"42: w_bool: optional boolean, 43: w_string: optional string, 44: w_bytes: optional binary, "+
		"45: any: optional struct<46: type_url: required string, 47: value: required binary>, "+
		"48: times: required list<timestamptz>>", typ.String())
	// String() does not show a map value's required-ness: map values are
	// optional (iceberg-go v0.7.0 cannot scan required ones), although
	// the decoder never stores a null there.
	maps := 0
	for _, f := range typ.(*iceberg.StructType).FieldList {
		if mt, ok := f.Type.(*iceberg.MapType); ok {
			require.False(t, mt.ValueRequired, f.Name)
			maps++
		}
	}
	require.Equal(t, 2, maps)
}

// TestDecodeAll decodes every mapping row and reads the values back from
// the Arrow arrays.
func TestDecodeAll(t *testing.T) {
	s := schema(allProto)
	md := descriptor(t, s)
	full := payload(t, md, `{
		"i32": -2147483648, "s32": -5, "sf32": -7,
		"i64": "-9223372036854775808", "s64": "9223372036854775807", "sf64": "-1",
		"u32": 4294967295, "f32": 4294967295,
		"u64": "18446744073709551615", "f64": "18446744073709551615",
		"b": true, "fl": 1.5, "db": -2.25, "s": "héllo", "by": "AAH/",
		"color": "GREEN", "opt": 0, "inner": {"id": "x"},
		"nums": [1, 2, 3], "inners": [{"id": "a"}, {"id": "b"}],
		"counts": {"a": "1"}, "by_id": {"7": {"id": "y"}},
		"number": "42",
		"ts": "2024-01-02T03:04:05.123456Z", "dur": "-1.500001s",
		"w_double": 0.5, "w_float": 0.25, "w_int64": "-3", "w_uint64": "18446744073709551615",
		"w_int32": -4, "w_uint32": 4294967295, "w_bool": false, "w_string": "", "w_bytes": "Zm9v",
		"times": ["1969-12-31T23:59:59.999999Z"]
	}`)
	// Any by hand: protojson would need its type registered.
	var anyMsg []byte
	anyMsg = protowire.AppendTag(anyMsg, 1, protowire.BytesType)
	anyMsg = protowire.AppendString(anyMsg, "type.googleapis.com/t.Inner")
	anyMsg = protowire.AppendTag(anyMsg, 2, protowire.BytesType)
	anyMsg = protowire.AppendBytes(anyMsg, []byte{0x0a, 0x01, 'z'})
	full = protowire.AppendTag(full, 36, protowire.BytesType)
	full = protowire.AppendBytes(full, anyMsg)

	unknownEnum := payload(t, md, `{"color": 7, "name": "n"}`)

	got, err := rows(t, s, nil, nil, []byte{}, full, unknownEnum)
	require.NoError(t, err)
	want := []string{
		// absent: implicit scalars are their zero value, the rest null or empty
		`{"any":null,"b":false,"by":"","by_id":[],"color":"RED","counts":[],"db":0,"dur":null,"f32":0,"f64":"0","fl":0,"i32":0,"i64":0,"inner":null,"inners":[],"name":null,"number":null,"nums":[],"opt":null,"s":"","s32":0,"s64":0,"sf32":0,"sf64":0,"times":[],"ts":null,"u32":0,"u64":"0","w_bool":null,"w_bytes":null,"w_double":null,"w_float":null,"w_int32":null,"w_int64":null,"w_string":null,"w_uint32":null,"w_uint64":null}`,
		// binary reads back as base64: CgF6 = 0a 01 7a, AAH/ = 00 01 ff
		`{"any":{"type_url":"type.googleapis.com/t.Inner","value":"CgF6"},"b":true,"by":"AAH/","by_id":[{"key":7,"value":{"id":"y"}}],"color":"GREEN","counts":[{"key":"a","value":1}],"db":-2.25,"dur":-1500001,"f32":4294967295,"f64":"18446744073709551615","fl":1.5,"i32":-2147483648,"i64":-9223372036854775808,"inner":{"id":"x"},"inners":[{"id":"a"},{"id":"b"}],"name":null,"number":42,"nums":[1,2,3],"opt":0,"s":"héllo","s32":-5,"s64":9223372036854775807,"sf32":-7,"sf64":-1,"times":["1969-12-31T23:59:59.999999Z"],"ts":"2024-01-02T03:04:05.123456Z","u32":4294967295,"u64":"18446744073709551615","w_bool":false,"w_bytes":"Zm9v","w_double":0.5,"w_float":0.25,"w_int32":-4,"w_int64":-3,"w_string":"","w_uint32":4294967295,"w_uint64":"18446744073709551615"}`,
		// an enum number the enum does not define reads as its decimal text
		`{"any":null,"b":false,"by":"","by_id":[],"color":"7","counts":[],"db":0,"dur":null,"f32":0,"f64":"0","fl":0,"i32":0,"i64":0,"inner":null,"inners":[],"name":"n","number":null,"nums":[],"opt":null,"s":"","s32":0,"s64":0,"sf32":0,"sf64":0,"times":[],"ts":null,"u32":0,"u64":"0","w_bool":null,"w_bytes":null,"w_double":null,"w_float":null,"w_int32":null,"w_int64":null,"w_string":null,"w_uint32":null,"w_uint64":null}`,
	}
	require.Equal(t, want, got)
}
