package protobuf_test

import (
	"encoding/base64"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/minkhq/mink/codec/protobuf"
	"github.com/minkhq/mink/codec/wire"
)

const proto2 = `syntax = "proto2";
message P {
  required int64 id = 1;
  optional string name = 2;
  optional int32 level = 3 [default = 5];
  optional Sub sub = 4;
}
message Sub {
  required string code = 1;
}
`

// TestProto2 covers proto2 presence: required is a required column (absent:
// a Decode error), optional is nullable, and a [default=] does not apply
// (absent is null, not the default).
func TestProto2(t *testing.T) {
	s := schema(proto2)
	typ, err := protobuf.Convert(s, nil)
	require.NoError(t, err)
	require.Equal(t, "struct<1: id: required long, 2: name: optional string, 3: level: optional int, 4: sub: optional struct<5: code: required string>>", typ.String())

	md := descriptor(t, s)
	got, err := rows(t, s, nil, nil,
		payload(t, md, `{"id": "1"}`),
		payload(t, md, `{"id": "2", "name": "n", "level": 9, "sub": {"code": "c"}}`))
	require.NoError(t, err)
	require.Equal(t, []string{
		`{"id":1,"level":null,"name":null,"sub":null}`,
		`{"id":2,"level":9,"name":"n","sub":{"code":"c"}}`,
	}, got)

	_, err = rows(t, s, nil, nil, []byte{})
	require.EqualError(t, err, "field id: required field is missing")
	sub := protowire.AppendTag(protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 1), 4, protowire.BytesType)
	sub = protowire.AppendBytes(sub, nil) // sub present, its code missing
	_, err = rows(t, s, nil, nil, sub)
	require.EqualError(t, err, "field sub.code: required field is missing")
}

// TestProto2RequiredNested: a required field inside list elements and map
// values is checked too.
func TestProto2RequiredNested(t *testing.T) {
	s := schema(`syntax = "proto2";
message R {
  repeated Sub subs = 1;
  map<string, Sub> by = 2;
}
message Sub { required string code = 1; }
`)
	md := descriptor(t, s)
	got, err := rows(t, s, nil, nil, payload(t, md, `{"subs": [{"code": "a"}], "by": {"k": {"code": "b"}}}`))
	require.NoError(t, err)
	require.Equal(t, []string{`{"by":[{"key":"k","value":{"code":"b"}}],"subs":[{"code":"a"}]}`}, got)

	entry := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), []byte("k")) // no value
	_, err = rows(t, s, nil, nil, protowire.AppendBytes(protowire.AppendTag(nil, 2, protowire.BytesType), entry))
	require.EqualError(t, err, "field by.value.code: required field is missing")
	_, err = rows(t, s, nil, nil, protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), nil))
	require.EqualError(t, err, "field subs.element.code: required field is missing")
}

const nested = `syntax = "proto3";
package n;
message First { int32 a = 1; }
message Second {
  message Inner { string b = 1; }
  message Other { bool c = 1; }
  int64 x = 1;
}
`

// TestMessageIndexes selects messages by the Confluent message index path.
func TestMessageIndexes(t *testing.T) {
	s := schema(nested)
	for _, tc := range []struct {
		indexes []int
		want    string
		json    string
		row     string
	}{
		{nil, "struct<1: a: required int>", `{"a": 3}`, `{"a":3}`},
		{[]int{0}, "struct<1: a: required int>", `{"a": 3}`, `{"a":3}`},
		{[]int{1}, "struct<1: x: required long>", `{"x": "4"}`, `{"x":4}`},
		{[]int{1, 0}, "struct<1: b: required string>", `{"b": "s"}`, `{"b":"s"}`},
		{[]int{1, 1}, "struct<1: c: required boolean>", `{"c": true}`, `{"c":true}`},
	} {
		typ, err := protobuf.Convert(s, tc.indexes)
		require.NoError(t, err)
		require.Equal(t, tc.want, typ.String())
		idx := tc.indexes
		if idx == nil {
			idx = []int{0}
		}
		got, err := rows(t, s, tc.indexes, nil, payload(t, descriptor(t, s, idx...), tc.json))
		require.NoError(t, err)
		require.Equal(t, []string{tc.row}, got)
	}
	_, err := protobuf.Convert(s, []int{2})
	require.EqualError(t, err, "protobuf: message index 2 at depth 0 of [2]: the schema has 2 messages there")
	_, err = protobuf.Convert(s, []int{0, 0})
	require.EqualError(t, err, "protobuf: message index 0 at depth 1 of [0 0]: the schema has 0 messages there")
}

// TestReferences compiles a schema whose imports are registry references,
// one of which has a reference of its own.
func TestReferences(t *testing.T) {
	money := wire.Reference{Name: "shop/money.proto", Subject: "money", Version: 1, Schema: wire.Schema{
		Type: wire.TypeProtobuf,
		Text: `syntax = "proto3"; package shop; import "shop/currency.proto"; message Money { int64 units = 1; Currency currency = 2; }`,
		References: []wire.Reference{{Name: "shop/currency.proto", Subject: "currency", Version: 2, Schema: wire.Schema{
			Type: wire.TypeProtobuf,
			Text: `syntax = "proto3"; package shop; enum Currency { EUR = 0; USD = 1; }`,
		}}},
	}}
	s := schema(`syntax = "proto3"; package shop; import "shop/money.proto"; message Order { string id = 1; Money total = 2; }`, money)
	typ, err := protobuf.Convert(s, nil)
	require.NoError(t, err)
	require.Equal(t, "struct<1: id: required string, 2: total: optional struct<3: units: required long, 4: currency: required string>>", typ.String())

	files := wire.Schema{Type: wire.TypeProtobuf, Text: s.Text, References: []wire.Reference{money, money.Schema.References[0]}}
	got, err := rows(t, s, nil, nil, payload(t, descriptor(t, &files), `{"id": "o1", "total": {"units": "12", "currency": "USD"}}`))
	require.NoError(t, err)
	require.Equal(t, []string{`{"id":"o1","total":{"currency":"USD","units":12}}`}, got)

	_, err = protobuf.Convert(schema(`syntax = "proto3"; import "missing.proto"; message M { int32 a = 1; }`), nil)
	require.ErrorContains(t, err, `missing.proto`)
}

// TestConvertRefuses names what Iceberg cannot hold.
func TestConvertRefuses(t *testing.T) {
	for _, tc := range []struct{ name, text, err string }{
		{"not protobuf", "", `protobuf: schema type "AVRO", not PROTOBUF`},
		{"syntax error", `syntax = "proto3"; message {`, "protobuf: compile schema 1:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := schema(tc.text)
			if tc.name == "not protobuf" {
				s.Type = wire.TypeAvro
			}
			_, err := protobuf.Convert(s, nil)
			require.ErrorContains(t, err, tc.err)
			if tc.name != "syntax error" {
				require.EqualError(t, err, tc.err)
			}
			_, err = protobuf.NewDecoder(s, nil, &iceberg.StructType{})
			require.Error(t, err)
		})
	}
}

// TestWireSemantics covers how Protobuf parsers read the wire (Protobuf
// spec, Encoding): fields in any order, packed and unpacked repeated
// fields, "last one wins" for scalars, merged embedded messages, the last
// entry of a repeated map key, the last member of a oneof, and unknown
// fields skipped and counted.
func TestWireSemantics(t *testing.T) {
	s := schema(`syntax = "proto3";
message W {
  int32 a = 1;
  repeated int32 nums = 2;
  Inner inner = 3;
  map<string, int32> m = 4;
  oneof o { string x = 5; Inner y = 6; }
  repeated string tags = 7;
}
message Inner { int32 p = 1; int32 q = 2; repeated int32 r = 3; }
`)
	tag := protowire.AppendTag
	vint := func(b []byte, num protowire.Number, v uint64) []byte {
		return protowire.AppendVarint(tag(b, num, protowire.VarintType), v)
	}
	msg := func(b []byte, num protowire.Number, body []byte) []byte {
		return protowire.AppendBytes(tag(b, num, protowire.BytesType), body)
	}
	var b []byte
	b = msg(b, 7, []byte("t1"))
	b = vint(b, 2, 1)                          // unpacked
	b = msg(b, 2, []byte{2, 3})                // packed
	b = vint(b, 2, 4)                          // unpacked again
	b = vint(b, 1, 10)                         // a ...
	b = vint(b, 1, 11)                         // ... given twice: the last wins
	b = msg(b, 3, vint(vint(nil, 1, 1), 3, 5)) // inner {p:1 r:[5]}
	b = msg(b, 3, vint(vint(nil, 2, 2), 3, 6)) // merged: {p:1 q:2 r:[5,6]}
	b = msg(b, 4, vint(msg(nil, 1, []byte("k")), 2, 1))
	b = msg(b, 4, vint(msg(nil, 1, []byte("j")), 2, 2))
	b = msg(b, 4, vint(msg(nil, 1, []byte("k")), 2, 3)) // key k again: the last entry wins
	b = msg(b, 4, vint(nil, 2, 4))                      // no key: ""
	b = msg(b, 4, msg(nil, 1, []byte("v")))             // no value: 0
	b = msg(b, 6, vint(nil, 1, 9))                      // oneof y ...
	b = msg(b, 5, []byte("x"))                          // ... then x: x wins
	b = vint(b, 99, 1)                                  // unknown
	b = msg(b, 3, vint(vint(nil, 98, 1), 97, 2))        // two unknown in inner
	b = msg(b, 7, []byte("t2"))

	target, err := protobuf.Convert(s, nil)
	require.NoError(t, err)
	dec, err := protobuf.NewDecoder(s, nil, target)
	require.NoError(t, err)
	require.NoError(t, dec.Decode(b))
	require.Equal(t, 3, dec.Unknown())

	got, err := rows(t, s, nil, nil, b)
	require.NoError(t, err)
	require.Equal(t, []string{`{"a":11,"inner":{"p":1,"q":2,"r":[5,6]},"m":[{"key":"j","value":2},{"key":"k","value":3},{"key":"","value":4},{"key":"v","value":0}],"nums":[1,2,3,4],"tags":["t1","t2"],"x":"x","y":null}`}, got)

	// Many entries with repeated keys take the map path of dedupe.
	var big []byte
	for i := range 40 {
		big = msg(big, 4, vint(msg(nil, 1, []byte{'a' + byte(i%20)}), 2, uint64(i)))
	}
	got, err = rows(t, s, nil, nil, big)
	require.NoError(t, err)
	require.Contains(t, got[0], `{"key":"a","value":20}`)
	require.NotContains(t, got[0], `{"key":"a","value":0}`)
	require.Equal(t, 20, countOf(got[0], `"key"`))
}

func countOf(s, sub string) int {
	n := 0
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			n++
		}
	}
	return n
}

// TestEditions: presence follows the file's features (Protobuf editions):
// explicit by default, implicit where a field says so.
func TestEditions(t *testing.T) {
	s := schema(`edition = "2023";
message E {
  int32 a = 1;
  int32 b = 2 [features.field_presence = IMPLICIT];
  int32 c = 3 [features.field_presence = LEGACY_REQUIRED];
}
`)
	typ, err := protobuf.Convert(s, nil)
	require.NoError(t, err)
	require.Equal(t, "struct<1: a: optional int, 2: b: required int, 3: c: required int>", typ.String())
	c := protowire.AppendVarint(protowire.AppendTag(nil, 3, protowire.VarintType), 7)
	got, err := rows(t, s, nil, nil, c)
	require.NoError(t, err)
	require.Equal(t, []string{`{"a":null,"b":0,"c":7}`}, got)
	_, err = rows(t, s, nil, nil, []byte{})
	require.EqualError(t, err, "field c: required field is missing")
}

// serialized returns the schema text a registry holds for a Protobuf
// schema registered as a serialized FileDescriptorProto (base64), the form
// confluent-kafka-python's ProtobufSerializer registers.
//
// No field has a json_name, as in the descriptors protoc embeds in
// generated code (which confluent-kafka-python registers).
func serialized(t *testing.T, md protoreflect.MessageDescriptor) string {
	t.Helper()
	fdp := protodesc.ToFileDescriptorProto(md.ParentFile())
	var clear func(m *descriptorpb.DescriptorProto)
	clear = func(m *descriptorpb.DescriptorProto) {
		for _, f := range m.Field {
			f.JsonName = nil
		}
		for _, n := range m.NestedType {
			clear(n)
		}
	}
	for _, m := range fdp.MessageType {
		clear(m)
	}
	b, err := proto.Marshal(fdp)
	require.NoError(t, err)
	return base64.StdEncoding.EncodeToString(b)
}

// A schema (and a reference) held as a base64 FileDescriptorProto, as
// Apicurio Registry keeps what confluent-kafka-python's ProtobufSerializer
// registered, converts and decodes as its .proto text does.
func TestSerializedDescriptor(t *testing.T) {
	text := `syntax = "proto3"; package usgs; import "google/protobuf/timestamp.proto"; import "geo.proto";
message Quake { string id = 1; optional double mag = 2; google.protobuf.Timestamp time = 3; geo.Point at = 4; int32 event_count = 5; }`
	geo := wire.Reference{Name: "geo.proto", Subject: "geo", Version: 1, Schema: wire.Schema{
		Type: wire.TypeProtobuf, Text: `syntax = "proto3"; package geo; message Point { repeated double coordinates = 1; }`,
	}}
	md := descriptor(t, schema(text, geo))
	asText, err := protobuf.Convert(schema(text, geo), nil)
	require.NoError(t, err)

	geoSerialized := geo
	geoSerialized.Schema.Text = serialized(t, md.Fields().ByName("at").Message())
	s := schema(serialized(t, md), geoSerialized)
	typ, err := protobuf.Convert(s, nil)
	require.NoError(t, err)
	require.Equal(t, asText.String(), typ.String())
	got, err := rows(t, s, nil, nil, payload(t, md, `{"id": "q1", "mag": 2.5, "time": "2018-02-07T01:26:13.840Z", "at": {"coordinates": [-118.6671667, 34.4945, 26.49]}, "eventCount": 7}`))
	require.NoError(t, err)
	require.Equal(t, []string{`{"at":{"coordinates":[-118.6671667,34.4945,26.49]},"event_count":7,"id":"q1","mag":2.5,"time":"2018-02-07T01:26:13.84Z"}`}, got)

	// Base64 that is no FileDescriptorProto stays text, and fails as such.
	_, err = protobuf.Convert(schema(base64.StdEncoding.EncodeToString([]byte{0xff, 0xff})), nil)
	require.Error(t, err)
}
