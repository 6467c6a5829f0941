package jsonschema_test

import (
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/codec"
	"github.com/minkhq/mink/codec/jsonschema"
)

// TestDecodeConverted runs the converted type through what the core does
// with it: codec.TableSchema, the JSON decoder, Arrow builders from
// table.SchemaToArrowSchema; then reads the values back from the arrays.
func TestDecodeConverted(t *testing.T) {
	typ, err := jsonschema.Convert(js(`{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"type": "object",
		"required": ["id", "at"],
		"properties": {
			"id": {"type": "integer"},
			"at": {"type": "string", "format": "date-time"},
			"day": {"type": "string", "format": "date"},
			"clock": {"type": "string", "format": "time"},
			"ref": {"type": "string", "format": "uuid"},
			"blob": {"type": "string", "contentEncoding": "base64"},
			"price": {"type": ["number", "null"]},
			"ok": {"type": "boolean"},
			"color": {"enum": ["red", "green"]},
			"tags": {"type": "array", "items": {"type": "string"}},
			"counts": {"type": "object", "additionalProperties": {"type": "integer"}},
			"customer": {"$ref": "#/$defs/customer"}
		},
		"$defs": {"customer": {"type": "object", "properties": {"id": {"type": "string"}, "details": {"type": "object", "properties": {"name": {"type": "string"}}}}}}
	}`))
	require.NoError(t, err)
	sc, err := codec.TableSchema(codec.Raw, codec.JSON, iceberg.NewSchema(0, typ.(*iceberg.StructType).FieldList...))
	require.NoError(t, err)
	dec, err := codec.NewDecoder(codec.JSON, sc, codec.JSONOptions{})
	require.NoError(t, err)
	asc, err := table.SchemaToArrowSchema(sc, nil, true, false)
	require.NoError(t, err)
	rb := array.NewRecordBuilder(memory.DefaultAllocator, asc)
	defer rb.Release()
	values := []string{
		`{"id": 9007199254740993, "at": "2024-02-29T23:59:59.123456+01:00", "day": "2024-02-29", "clock": "12:34:56.5",
		  "ref": "0f8fad5b-d9cb-469f-a165-70867728950e", "blob": "aGVsbG8=", "price": 1.25, "ok": true, "color": "red",
		  "tags": ["a", "b"], "counts": {"x": 1, "y": -2}, "customer": {"id": "c1", "details": {"name": "Ada"}}}`,
		`{"id": -1, "at": "1970-01-01T00:00:00Z", "price": null}`,
	}
	for _, v := range values {
		require.NoError(t, dec.Decode([]byte(v)))
		rb.Field(0).AppendNull() // _kafka is not the decoder's business
		dec.Append(rb.Fields()[1:])
	}
	// A value that does not fit its column is a dead letter with the path
	// (docs/formats-json-schema.md, "Values").
	for _, tt := range []struct{ value, err string }{
		{`{"id": 1, "at": "2024-02-29T23:59:59"}`,
			`field at: cannot convert string "2024-02-29T23:59:59" to timestamptz: missing zone offset (Z or ±HH:MM)`},
		{`{"id": 1, "at": "2024-02-29T23:59:59.123456789Z"}`,
			`field at: cannot convert string "2024-02-29T23:59:59.123456789Z" to timestamptz: finer than microseconds`},
		{`{"id": 1, "at": "2024-02-29T23:59:59Z", "clock": "12:34:56Z"}`,
			`field clock: cannot convert string "12:34:56Z" to time: want HH:MM:SS[.ffffff]`},
		{`{"id": 9223372036854775808, "at": "2024-02-29T23:59:59Z"}`,
			`field id: cannot convert number 9223372036854775808 to long: out of range`},
		{`{"id": 1.5, "at": "2024-02-29T23:59:59Z"}`,
			`field id: cannot convert number 1.5 to long: has a fraction`},
		{`{"at": "2024-02-29T23:59:59Z"}`, `field id: required field is missing`},
		{`{"id": 1, "at": "2024-02-29T23:59:59Z", "ref": "not-a-uuid"}`,
			`field ref: cannot convert string "not-a-uuid" to uuid`},
	} {
		require.EqualError(t, dec.Decode([]byte(tt.value)), tt.err)
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()

	col := func(name string) int {
		idx := rec.Schema().FieldIndices(name)
		require.Len(t, idx, 1, name)
		return idx[0]
	}
	id := rec.Column(col("id")).(*array.Int64)
	require.Equal(t, []int64{9007199254740993, -1}, id.Int64Values())
	at := rec.Column(col("at")).(*array.Timestamp)
	require.Equal(t, time.Date(2024, 2, 29, 22, 59, 59, 123456000, time.UTC).UnixMicro(), int64(at.Value(0)))
	require.Equal(t, int64(0), int64(at.Value(1)))
	day := rec.Column(col("day")).(*array.Date32)
	require.Equal(t, "2024-02-29", day.Value(0).FormattedString())
	require.True(t, day.IsNull(1))
	clock := rec.Column(col("clock")).(*array.Time64)
	require.Equal(t, int64((12*3600+34*60+56)*1e6+500000), int64(clock.Value(0)))
	ref := rec.Column(col("ref")).(*extensions.UUIDArray)
	require.Equal(t, "0f8fad5b-d9cb-469f-a165-70867728950e", ref.Value(0).String())
	blob := rec.Column(col("blob")).(*array.Binary)
	require.Equal(t, "hello", string(blob.Value(0)))
	price := rec.Column(col("price")).(*array.Float64)
	require.Equal(t, 1.25, price.Value(0))
	require.True(t, price.IsNull(1))
	require.True(t, rec.Column(col("ok")).(*array.Boolean).Value(0))
	require.Equal(t, "red", rec.Column(col("color")).(*array.String).Value(0))
	tags := rec.Column(col("tags")).(*array.List)
	start, end := tags.ValueOffsets(0)
	elems := tags.ListValues().(*array.String)
	var got []string
	for i := start; i < end; i++ {
		got = append(got, elems.Value(int(i)))
	}
	require.Equal(t, []string{"a", "b"}, got)
	counts := rec.Column(col("counts")).(*array.Map)
	keys, vals := counts.Keys().(*array.String), counts.Items().(*array.Int64)
	require.Equal(t, []string{"x", "y"}, []string{keys.Value(0), keys.Value(1)})
	require.Equal(t, []int64{1, -2}, vals.Int64Values())
	customer := rec.Column(col("customer")).(*array.Struct)
	require.Equal(t, "c1", customer.Field(0).(*array.String).Value(0))
	details := customer.Field(1).(*array.Struct)
	require.Equal(t, "Ada", details.Field(0).(*array.String).Value(0))
	require.True(t, customer.IsNull(1))
}
