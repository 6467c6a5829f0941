package protobuf_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/minkhq/mink/codec/protobuf"
)

const markersProto = `syntax = "proto3";
package m;
import "google/protobuf/empty.proto";

message Event {
  string id = 1;
  oneof kind {
    Started started = 2;
    Stopped stopped = 3;
    Progress progress = 4;
  }
  KeepAlive keep_alive = 5;
  google.protobuf.Empty ping = 6;
  repeated KeepAlive beats = 7;
  map<string, Started> marks = 8;
}
message Started {}
message Stopped {}
message Progress { int32 percent = 1; }
message KeepAlive {}
`

// Messages without fields (oneof arms that mark a case, a KeepAlive {},
// google.protobuf.Empty) are booleans: true where present, null where
// absent, so the arm that is set is the one column that is true.
func TestMarkers(t *testing.T) {
	s := schema(markersProto)
	typ, err := protobuf.Convert(s, nil)
	require.NoError(t, err)
	require.Equal(t, "struct<1: id: required string, 2: started: optional boolean, 3: stopped: optional boolean, "+
		"4: progress: optional struct<5: percent: required int>, 6: keep_alive: optional boolean, 7: ping: optional boolean, "+
		"8: beats: required list<boolean>, 10: marks: required map<string, boolean>>", typ.String())

	md := descriptor(t, s)
	// Started, then Stopped on the wire: the last arm of a oneof wins.
	twoArms := append(payload(t, md, `{"id": "b", "started": {}}`), payload(t, md, `{"stopped": {}}`)...)
	// A marker with a field the schema does not know: skipped and counted.
	withUnknown := protowire.AppendTag(nil, 5, protowire.BytesType)
	withUnknown = protowire.AppendBytes(withUnknown, protowire.AppendVarint(protowire.AppendTag(nil, 9, protowire.VarintType), 1))
	got, err := rows(t, s, nil, nil,
		payload(t, md, `{"id": "a", "started": {}, "ping": {}, "beats": [{}, {}], "marks": {"x": {}}}`),
		twoArms,
		payload(t, md, `{"id": "c", "progress": {"percent": 40}, "keepAlive": {}}`),
		withUnknown,
	)
	require.NoError(t, err)
	require.Equal(t, []string{
		`{"beats":[true,true],"id":"a","keep_alive":null,"marks":[{"key":"x","value":true}],"ping":true,"progress":null,"started":true,"stopped":null}`,
		`{"beats":[],"id":"b","keep_alive":null,"marks":[],"ping":null,"progress":null,"started":null,"stopped":true}`,
		`{"beats":[],"id":"c","keep_alive":true,"marks":[],"ping":null,"progress":{"percent":40},"started":null,"stopped":null}`,
		`{"beats":[],"id":"","keep_alive":true,"marks":[],"ping":null,"progress":null,"started":null,"stopped":null}`,
	}, got)
	dec, err := protobuf.NewDecoder(s, nil, typ)
	require.NoError(t, err)
	require.NoError(t, dec.Decode(withUnknown))
	require.Equal(t, 1, dec.Unknown())
	// A map entry without its value holds the empty message: present.
	entry := protowire.AppendTag(nil, 8, protowire.BytesType)
	entry = protowire.AppendBytes(entry, protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "k"))
	got, err = rows(t, s, nil, nil, entry)
	require.NoError(t, err)
	require.Contains(t, got[0], `"marks":[{"key":"k","value":true}]`)
}

// A message without fields selected as the table's message (a topic of
// KeepAlive {} records) has no value columns; its records are rows.
func TestEmptyTopLevel(t *testing.T) {
	s := schema(`syntax = "proto3"; package k; message KeepAlive {}`)
	typ, err := protobuf.Convert(s, nil)
	require.NoError(t, err)
	require.Equal(t, "struct<>", typ.String())
	dec, err := protobuf.NewDecoder(s, nil, typ)
	require.NoError(t, err)
	require.NoError(t, dec.Decode(nil))
	require.NoError(t, dec.Decode(protowire.AppendVarint(protowire.AppendTag(nil, 3, protowire.VarintType), 7)))
	require.Equal(t, 1, dec.Unknown())
}

const jsonProto = `syntax = "proto3";
package j;
import "google/protobuf/struct.proto";

message Doc {
  string id = 1;
  google.protobuf.Struct attrs = 2;
  google.protobuf.Value v = 3;
  google.protobuf.ListValue l = 4;
  repeated google.protobuf.Value vs = 5;
  map<string, google.protobuf.Struct> by = 6;
}
`

// google.protobuf.Struct, Value and ListValue are strings holding their
// JSON: keys sorted, no spaces, numbers in their shortest exact form, the
// same bytes whatever order the producer wrote the entries in.
func TestSchemalessJSON(t *testing.T) {
	s := schema(jsonProto)
	typ, err := protobuf.Convert(s, nil)
	require.NoError(t, err)
	require.Equal(t, "struct<1: id: required string, 2: attrs: optional string, 3: v: optional string, 4: l: optional string, "+
		"5: vs: required list<string>, 7: by: required map<string, string>>", typ.String())
	md := descriptor(t, s)
	got, err := rows(t, s, nil, nil,
		payload(t, md, `{"id": "a",
			"attrs": {"z": 1, "a": "x\"\n\u0001é", "m": {"k": [true, null, 0.1, 1e21, -2.5e-7, 12345678901234567890]}, "e": {}, "n": null},
			"v": 3, "l": [], "vs": ["s", {"b": false}], "by": {"q": {"x": 1}, "p": {}}}`),
		payload(t, md, `{"id": "b", "v": null}`),
	)
	require.NoError(t, err)
	require.Equal(t, []string{
		`{"attrs":"{\"a\":\"x\\\"\\n\\u0001é\",\"e\":{},\"m\":{\"k\":[true,null,0.1,1e+21,-2.5e-7,12345678901234567000]},\"n\":null,\"z\":1}",` +
			`"by":[{"key":"p","value":"{}"},{"key":"q","value":"{\"x\":1}"}],"id":"a","l":"[]","v":"3","vs":["\"s\"","{\"b\":false}"]}`,
		`{"attrs":null,"by":[],"id":"b","l":null,"v":"null","vs":[]}`,
	}, got)

	// Entries in another order, and a Struct given twice (merged): the same text.
	a := payload(t, md, `{"attrs": {"b": 2}}`)
	b := payload(t, md, `{"attrs": {"a": 1, "b": 3}}`)
	got, err = rows(t, s, nil, nil, append(a, b...), payload(t, md, `{"attrs": {"b": 3, "a": 1}}`))
	require.NoError(t, err)
	require.Equal(t, got[0], got[1])
	require.Contains(t, got[0], `"attrs":"{\"a\":1,\"b\":3}"`)
}

// A value no row keeps (a map entry whose key comes again) is not
// rendered: its lack of a JSON form does not refuse the record, as
// protojson would not see it either.
func TestSchemalessJSONDropped(t *testing.T) {
	s := schema(jsonProto)
	entry := func(value []byte) []byte {
		e := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "q")
		e = protowire.AppendBytes(protowire.AppendTag(e, 2, protowire.BytesType), value)
		return protowire.AppendBytes(protowire.AppendTag(nil, 6, protowire.BytesType), e)
	}
	noKind := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "k")
	noKind = protowire.AppendBytes(protowire.AppendTag(noKind, 2, protowire.BytesType), nil) // Value {}
	st := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), noKind)    // Struct {k: Value {}}
	got, err := rows(t, s, nil, nil, append(entry(st), entry(nil)...))
	require.NoError(t, err)
	require.Contains(t, got[0], `"by":[{"key":"q","value":"{}"}]`)
	_, err = rows(t, s, nil, nil, append(entry(nil), entry(st)...))
	require.EqualError(t, err, "field by: google.protobuf.Value has none of its kinds set, and no JSON form")
}

// What has no JSON form, or is not valid, is a Decode error naming the
// field: never a text that reads back as another value.
func TestSchemalessJSONRefuses(t *testing.T) {
	s := schema(jsonProto)
	emptyValue := protowire.AppendBytes(protowire.AppendTag(nil, 3, protowire.BytesType), nil)
	nan := protowire.AppendFixed64(protowire.AppendTag(nil, 2, protowire.Fixed64Type), 0x7FF8000000000001)
	badUTF8 := protowire.AppendString(protowire.AppendTag(nil, 3, protowire.BytesType), "\xff")
	for _, tc := range []struct {
		name    string
		payload []byte
		err     string
	}{
		{"value without kind", emptyValue, "field v: google.protobuf.Value has none of its kinds set, and no JSON form"},
		{"NaN", protowire.AppendBytes(protowire.AppendTag(nil, 3, protowire.BytesType), nan), "field v: google.protobuf.Value: number NaN has no JSON form"},
		{"invalid UTF-8", protowire.AppendBytes(protowire.AppendTag(nil, 3, protowire.BytesType), badUTF8),
			"field v: not a valid google.protobuf.Value message (invalid wire data, invalid UTF-8, or nested deeper than 10000)"},
		{"wire type", protowire.AppendBytes(protowire.AppendTag(nil, 3, protowire.BytesType), protowire.AppendVarint(protowire.AppendTag(nil, 3, protowire.VarintType), 1)),
			"field v: google.protobuf.Value: field string_value has wire type varint (0)"},
		{"map value without kind", func() []byte {
			entry := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "k")
			st := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), entry)
			return protowire.AppendBytes(protowire.AppendTag(nil, 2, protowire.BytesType), st)
		}(), "field attrs: google.protobuf.Value has none of its kinds set, and no JSON form"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rows(t, s, nil, nil, tc.payload)
			require.EqualError(t, err, tc.err)
		})
	}
}

// A recursive message is mapped as usual down to where it recurs; that
// field holds the JSON of its message, whole at any depth.
func TestRecursive(t *testing.T) {
	s := schema(`syntax = "proto3";
package r;
import "google/protobuf/timestamp.proto";
message Node {
  string name = 1;
  Node next = 2;
  repeated Node children = 3;
  Leaf leaf = 4;
}
message Leaf { int64 big = 1; bytes raw = 2; google.protobuf.Timestamp at = 3; Node back = 4; optional int32 zero = 5; float f = 6; Kind kind = 7; map<int32, string> m = 8; }
enum Kind { K0 = 0; K1 = 1; }
`)
	typ, err := protobuf.Convert(s, nil)
	require.NoError(t, err)
	require.Equal(t, "struct<1: name: required string, 2: next: optional string, 3: children: required list<string>, "+
		"5: leaf: optional struct<6: big: required long, 7: raw: required binary, 8: at: optional timestamptz, 9: back: optional string, "+
		"10: zero: optional int, 11: f: required float, 12: kind: required string, 13: m: required map<int, string>>>", typ.String())
	md := descriptor(t, s)
	got, err := rows(t, s, nil, nil, payload(t, md, `{"name": "root",
		"next": {"name": "n1", "next": {"name": "n2", "next": {"name": "n3", "leaf": {"big": "9007199254740993"}}}},
		"children": [{"name": "c1"}, {}],
		"leaf": {"big": "1", "back": {"name": "up", "leaf": {"raw": "AAE=", "at": "2024-01-02T03:04:05.120Z", "zero": 0, "f": 0.1, "kind": "K1", "m": {"10": "a", "9": "b"}}}}}`))
	require.NoError(t, err)
	require.Equal(t, []string{`{"children":["{\"name\":\"c1\"}","{}"],` +
		`"leaf":{"at":null,"back":"{\"name\":\"up\",\"leaf\":{\"raw\":\"AAE=\",\"at\":\"2024-01-02T03:04:05.120Z\",\"zero\":0,\"f\":0.1,\"kind\":\"K1\",\"m\":{\"10\":\"a\",\"9\":\"b\"}}}","big":1,"f":0,"kind":"K0","m":[],"raw":"","zero":null},` +
		`"name":"root","next":"{\"name\":\"n1\",\"next\":{\"name\":\"n2\",\"next\":{\"name\":\"n3\",\"leaf\":{\"big\":\"9007199254740993\"}}}}"}`}, got)

	// Mutual recursion: B's field back to A is JSON.
	s = schema(`syntax = "proto3"; package r; message A { B b = 1; } message B { repeated A a = 1; int32 x = 2; }`)
	typ, err = protobuf.Convert(s, nil)
	require.NoError(t, err)
	require.Equal(t, "struct<1: b: optional struct<2: a: required list<string>, 4: x: required int>>", typ.String())
}

// Groups (proto2) and delimited messages (editions) are messages written
// between a start and an end tag: structs like any message, repeated,
// merged when given twice, empty ones markers.
func TestGroups(t *testing.T) {
	s := schema(`syntax = "proto2"; package g;
message G {
  optional group Item = 1 { optional int32 x = 2; repeated string tags = 3; }
  repeated group Line = 4 { required int64 n = 5; }
  optional group Mark = 6 {}
  optional int32 after = 7;
}`)
	typ, err := protobuf.Convert(s, nil)
	require.NoError(t, err)
	require.Equal(t, "struct<1: item: optional struct<2: x: optional int, 3: tags: required list<string>>, "+
		"5: line: required list<struct<7: n: required long>>, 8: mark: optional boolean, 9: after: optional int>", typ.String())
	md := descriptor(t, s)
	twice := append(payload(t, md, `{"Item": {"x": 1, "tags": ["a"]}}`), payload(t, md, `{"Item": {"tags": ["b"]}, "after": 3}`)...)
	got, err := rows(t, s, nil, nil,
		payload(t, md, `{"Item": {"x": 1}, "Line": [{"n": "2"}, {"n": "3"}], "Mark": {}, "after": 9}`),
		twice,
		payload(t, md, `{}`))
	require.NoError(t, err)
	require.Equal(t, []string{
		`{"after":9,"item":{"tags":[],"x":1},"line":[{"n":2},{"n":3}],"mark":true}`,
		`{"after":3,"item":{"tags":["a","b"],"x":1},"line":[],"mark":null}`,
		`{"after":null,"item":null,"line":[],"mark":null}`,
	}, got)

	// An end tag of another field number, a group without its end, a
	// required field missing inside: Decode errors.
	_, err = rows(t, s, nil, nil, []byte{0x0b, 0x10, 0x01, 0x14})
	require.EqualError(t, err, "field item: group at byte 1: mismatched group end")
	_, err = rows(t, s, nil, nil, []byte{0x0b, 0x10, 0x01})
	require.EqualError(t, err, "field item: group at byte 1: unexpected EOF")
	_, err = rows(t, s, nil, nil, []byte{0x23, 0x24})
	require.EqualError(t, err, "field line.element.n: required field is missing")

	d := schema(`edition = "2023"; package d;
message D { Inner inner = 1 [features.message_encoding = DELIMITED]; int32 y = 2; }
message Inner { int32 x = 1; }`)
	typ, err = protobuf.Convert(d, nil)
	require.NoError(t, err)
	require.Equal(t, "struct<1: inner: optional struct<2: x: optional int>, 3: y: optional int>", typ.String())
	got, err = rows(t, d, nil, nil, payload(t, descriptor(t, d), `{"inner": {"x": 4}, "y": 5}`))
	require.NoError(t, err)
	require.Equal(t, []string{`{"inner":{"x":4},"y":5}`}, got)
}

// MessageName and MessageIndexes are inverses over the messages of a
// schema, nested ones and the ones after a map field's entry included.
func TestMessageNames(t *testing.T) {
	s := schema(`syntax = "proto3"; package n;
message A { map<string, int32> m = 1; message B { int32 x = 1; } }
message C { message D { message E { int32 y = 1; } } }`)
	for _, tc := range []struct {
		name    string
		indexes []int
	}{{"n.A", []int{0}}, {"n.A.B", []int{0, 1}}, {"n.C", []int{1}}, {"n.C.D.E", []int{1, 0, 0}}} {
		got, err := protobuf.MessageName(s, tc.indexes)
		require.NoError(t, err)
		require.Equal(t, tc.name, got)
		idx, err := protobuf.MessageIndexes(s, tc.name)
		require.NoError(t, err)
		require.Equal(t, tc.indexes, idx)
	}
	name, err := protobuf.MessageName(s, nil)
	require.NoError(t, err)
	require.Equal(t, "n.A", name)
	_, err = protobuf.MessageIndexes(s, "n.Z")
	require.EqualError(t, err, "protobuf: schema 1 has no message n.Z (it has [n.A n.A.B n.C n.C.D n.C.D.E])")
}
