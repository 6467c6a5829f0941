package protobuf_test

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/minkhq/mink/codec/protobuf"
)

const v1 = `syntax = "proto3";
message Order {
  int32 id = 1;
  float score = 2;
  uint64 big = 3;
  Customer customer = 4;
  repeated int32 codes = 5;
  map<string, float> weights = 6;
}
message Customer { string id = 1; }
`

// evolved is what schema evolution makes of v1's table: int→long,
// float→double, decimal(20,0)→decimal(25,0), required→optional, and new
// optional fields at the top and inside customer (which v1 lacks).
func evolved() *iceberg.StructType {
	return &iceberg.StructType{FieldList: []iceberg.NestedField{
		{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: false},
		{ID: 2, Name: "score", Type: iceberg.PrimitiveTypes.Float64, Required: true},
		{ID: 3, Name: "big", Type: iceberg.DecimalTypeOf(25, 0), Required: true},
		{ID: 4, Name: "customer", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 5, Name: "id", Type: iceberg.PrimitiveTypes.String, Required: true},
			{ID: 20, Name: "details", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
				{ID: 21, Name: "name", Type: iceberg.PrimitiveTypes.String},
			}}},
		}}},
		{ID: 6, Name: "codes", Type: &iceberg.ListType{ElementID: 7, Element: iceberg.PrimitiveTypes.Int64, ElementRequired: false}, Required: true},
		{ID: 8, Name: "weights", Type: &iceberg.MapType{KeyID: 9, KeyType: iceberg.PrimitiveTypes.String, ValueID: 10, ValueType: iceberg.PrimitiveTypes.Float64, ValueRequired: false}, Required: true},
		{ID: 22, Name: "note", Type: iceberg.PrimitiveTypes.String},
		{ID: 23, Name: "tags", Type: &iceberg.ListType{ElementID: 24, Element: iceberg.PrimitiveTypes.String}},
	}}
}

// TestPromotions decodes v1 payloads into the evolved table.
func TestPromotions(t *testing.T) {
	s := schema(v1)
	md := descriptor(t, s)
	got, err := rows(t, s, nil, evolved(),
		payload(t, md, `{"id": -7, "score": 0.1, "big": "18446744073709551615", "customer": {"id": "c"}, "codes": [2147483647], "weights": {"w": 1.5}}`),
		payload(t, md, `{}`))
	require.NoError(t, err)
	require.Equal(t, []string{
		// 0.1f widened exactly: 0.10000000149011612
		`{"big":"18446744073709551615","codes":[2147483647],"customer":{"details":null,"id":"c"},"id":-7,"note":null,"score":0.10000000149011612,"tags":null,"weights":[{"key":"w","value":1.5}]}`,
		`{"big":"0","codes":[],"customer":null,"id":0,"note":null,"score":0,"tags":null,"weights":[]}`,
	}, got)
}

// TestNewDecoderRefuses: a target that is not the writer's type or an
// Iceberg promotion of it is refused, naming the field.
func TestNewDecoderRefuses(t *testing.T) {
	s := schema(v1)
	for _, tc := range []struct {
		name   string
		change func(*iceberg.StructType)
		err    string
	}{
		{"string to int", func(st *iceberg.StructType) {
			st.FieldList[3].Type.(*iceberg.StructType).FieldList[0].Type = iceberg.PrimitiveTypes.Int32
		}, "field customer.id: writer string, table int"},
		{"long to int", func(st *iceberg.StructType) { st.FieldList[0].Type = iceberg.PrimitiveTypes.Int32 }, ""},
		{"narrower decimal", func(st *iceberg.StructType) { st.FieldList[2].Type = iceberg.DecimalTypeOf(19, 0) },
			"field big: writer decimal(20, 0), table decimal(19, 0)"},
		{"double to float", func(st *iceberg.StructType) { st.FieldList[1].Type = iceberg.PrimitiveTypes.Float32 }, ""},
		{"writer field missing from table", func(st *iceberg.StructType) { st.FieldList = st.FieldList[1:] },
			"field id: in the writer's message Order, not in the table"},
		{"required table field the writer lacks", func(st *iceberg.StructType) { st.FieldList[6].Required = true },
			"field note: required in the table, missing in the writer's message Order"},
		{"optional writer, required table", func(st *iceberg.StructType) { st.FieldList[3].Required = true },
			"field customer: optional in the writer, required in the table"},
		{"list element type", func(st *iceberg.StructType) {
			st.FieldList[4].Type = &iceberg.ListType{ElementID: 7, Element: iceberg.PrimitiveTypes.String}
		}, "field codes.element: writer int, table string"},
		{"map value type", func(st *iceberg.StructType) {
			st.FieldList[5].Type = &iceberg.MapType{KeyID: 9, KeyType: iceberg.PrimitiveTypes.String, ValueID: 10, ValueType: iceberg.PrimitiveTypes.Int32}
		}, "field weights.value: writer float, table int"},
		{"list as struct", func(st *iceberg.StructType) { st.FieldList[4].Type = &iceberg.StructType{} },
			"field codes: writer list, table struct<>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := evolved()
			if tc.name == "long to int" {
				// v1's id is int; a table of int with a long writer is the refusal
				s := schema(`syntax = "proto3"; message Order { int64 id = 1; }`)
				_, err := protobuf.NewDecoder(s, nil, &iceberg.StructType{FieldList: []iceberg.NestedField{{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int32, Required: true}}})
				require.EqualError(t, err, "field id: writer long, table int")
				return
			}
			if tc.name == "double to float" {
				s := schema(`syntax = "proto3"; message Order { double d = 1; }`)
				_, err := protobuf.NewDecoder(s, nil, &iceberg.StructType{FieldList: []iceberg.NestedField{{ID: 1, Name: "d", Type: iceberg.PrimitiveTypes.Float32, Required: true}}})
				require.EqualError(t, err, "field d: writer double, table float")
				return
			}
			tc.change(st)
			_, err := protobuf.NewDecoder(s, nil, st)
			require.EqualError(t, err, tc.err)
		})
	}
}

// TestDecodeErrors: corrupt payloads fail with the field path and why.
func TestDecodeErrors(t *testing.T) {
	s := schema(`syntax = "proto3";
import "google/protobuf/timestamp.proto";
import "google/protobuf/duration.proto";
message E {
  int32 n = 1;
  string s = 2;
  Inner inner = 3;
  google.protobuf.Timestamp ts = 4;
  google.protobuf.Duration d = 5;
  uint32 u = 6;
  repeated sint32 z = 7;
}
message Inner { string name = 1; }
`)
	tag := protowire.AppendTag
	vint := func(b []byte, num protowire.Number, v uint64) []byte {
		return protowire.AppendVarint(tag(b, num, protowire.VarintType), v)
	}
	msg := func(b []byte, num protowire.Number, body []byte) []byte {
		return protowire.AppendBytes(tag(b, num, protowire.BytesType), body)
	}
	ts := func(secs int64, nanos int32) []byte {
		return vint(vint(nil, 1, uint64(secs)), 2, uint64(int64(nanos)))
	}
	for _, tc := range []struct {
		name    string
		payload []byte
		err     string
	}{
		{"truncated varint", []byte{0x08, 0x80}, "field n: varint at byte 1: unexpected EOF"},
		{"truncated tag", []byte{0x80}, "message E: tag at byte 0: unexpected EOF"},
		{"varint overflow", []byte{0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, "field n: varint at byte 1: varint longer than 10 bytes"},
		{"mismatched group end", []byte{0x7b, 0x84, 0x01}, "message E: unknown field 15 at byte 1: mismatched group end"},
		{"field number 0", []byte{0x00, 0x01}, "message E: tag at byte 0: invalid field number"},
		{"field number above 2^29-1", protowire.AppendVarint(nil, uint64(protowire.MaxValidNumber+1)<<3), "message E: tag at byte 0: invalid field number"},
		{"bad length", []byte{0x12, 0x05, 'a'}, "field s: length 5 at byte 1 runs past the end (1 bytes left)"},
		{"bad UTF-8", msg(nil, 2, []byte{0xff, 'a'}), "field s: string at byte 2 is not valid UTF-8"},
		{"bad UTF-8 nested", msg(nil, 3, msg(nil, 1, []byte{0xc3})), "field inner.name: string at byte 4 is not valid UTF-8"},
		{"wrong wire type", msg(nil, 1, []byte("x")), "field n: wire type len (2), want varint (0)"},
		{"wrong wire type nested", msg(nil, 3, vint(nil, 1, 1)), "field inner.name: wire type varint (0), want len (2)"},
		{"int32 out of range", vint(nil, 1, 1<<40), "field n: value 1099511627776 out of range for int32"},
		{"uint32 out of range", vint(nil, 6, 1<<32), "field u: value 4294967296 out of range for uint32"},
		{"sint32 out of range", vint(nil, 7, protowire.EncodeZigZag(-1<<31-1)), "field z: value -2147483649 out of range for sint32"},
		{"timestamp not whole µs", msg(nil, 4, ts(1, 1500)), "field ts: timestamp of 1 s and 1500 ns is not a whole number of microseconds in the int64 range"},
		{"timestamp out of range", msg(nil, 4, ts(1<<62, 0)), "field ts: timestamp of 4611686018427387904 s and 0 ns is not a whole number of microseconds in the int64 range"},
		{"timestamp negative nanos", msg(nil, 4, ts(1, -1000)), "field ts: timestamp nanos -1000 outside 0..999999999"},
		{"duration signs", msg(nil, 5, ts(1, -1000)), "field d: duration of 1 s and -1000 ns is not valid (nanos within ±999999999, of the sign of seconds)"},
		{"duration not whole µs", msg(nil, 5, ts(0, 1)), "field d: duration of 0 s and 1 ns is not a whole number of microseconds in the int64 range"},
		{"bad unknown field", []byte{0x78, 0x80}, "message E: unknown field 15 at byte 1: unexpected EOF"},
		{"truncated packed", msg(nil, 7, []byte{0x80}), "field z: varint at byte 2: unexpected EOF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rows(t, s, nil, nil, tc.payload)
			require.EqualError(t, err, tc.err)
		})
	}

	// A failed Decode keeps nothing: Append after it appends no row.
	target, err := protobuf.Convert(s, nil)
	require.NoError(t, err)
	dec, err := protobuf.NewDecoder(s, nil, target)
	require.NoError(t, err)
	asc, err := table.SchemaToArrowSchema(iceberg.NewSchema(0, target.(*iceberg.StructType).FieldList...), nil, true, false)
	require.NoError(t, err)
	rb := array.NewRecordBuilder(memory.DefaultAllocator, asc)
	defer rb.Release()
	require.NoError(t, dec.Decode(msg(nil, 2, []byte("ok"))))
	dec.Append(rb.Fields())
	require.Error(t, dec.Decode(msg(msg(nil, 2, []byte("half")), 1, []byte("x"))))
	dec.Append(rb.Fields())
	rec := rb.NewRecordBatch()
	defer rec.Release()
	require.EqualValues(t, 1, rec.NumRows())
	require.Equal(t, "ok", rec.Column(1).(*array.String).Value(0))
}
