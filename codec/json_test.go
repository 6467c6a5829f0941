package codec_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/codec"
	"github.com/minkhq/mink/internal/testkit"
)

// rows decodes each value with a decoder for the declared schema and
// returns the value columns as one record batch, or the first error.
func rows(t *testing.T, declared *iceberg.Schema, values ...string) (arrow.RecordBatch, *codec.Decoder, error) {
	t.Helper()
	return rowsWith(t, codec.JSONOptions{}, declared, values...)
}

// rowsWith is rows with decoder options.
func rowsWith(t *testing.T, opts codec.JSONOptions, declared *iceberg.Schema, values ...string) (arrow.RecordBatch, *codec.Decoder, error) {
	t.Helper()
	sc, err := codec.TableSchema(codec.Raw, codec.JSON, declared)
	require.NoError(t, err)
	dec, err := codec.NewDecoder(codec.JSON, sc, opts)
	require.NoError(t, err)
	asc, err := table.SchemaToArrowSchema(sc, nil, true, false)
	require.NoError(t, err)
	rb := array.NewRecordBuilder(memory.DefaultAllocator, asc)
	defer rb.Release()
	for _, v := range values {
		if err := dec.Decode([]byte(v)); err != nil {
			return nil, dec, err
		}
		rb.Field(0).AppendNull() // _kafka is not the decoder's business
		dec.Append(rb.Fields()[1:])
	}
	rec := rb.NewRecordBatch()
	t.Cleanup(rec.Release)
	return rec, dec, nil
}

func one(typ iceberg.Type, required bool) *iceberg.Schema {
	return iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "f", Type: typ, Required: required})
}

// scalar reads row 0 of column 1 as a Go value.
func scalar(col arrow.Array) any {
	if col.IsNull(0) {
		return nil
	}
	switch a := col.(type) {
	case *array.Boolean:
		return a.Value(0)
	case *array.Int32:
		return a.Value(0)
	case *array.Int64:
		return a.Value(0)
	case *array.Float32:
		return a.Value(0)
	case *array.Float64:
		return a.Value(0)
	case *array.String:
		return a.Value(0)
	case *array.Binary:
		return string(a.Value(0))
	case *array.FixedSizeBinary:
		return string(a.Value(0))
	case *array.Date32:
		return int32(a.Value(0))
	case *array.Time64:
		return int64(a.Value(0))
	case *array.Timestamp:
		return int64(a.Value(0))
	case *array.Decimal128:
		return a.Value(0).BigInt().String()
	case *extensions.UUIDArray:
		return a.Value(0).String()
	}
	b, _ := json.Marshal(col.GetOneForMarshal(0))
	return string(b)
}

func TestJSONConversions(t *testing.T) {
	ts := time.Date(2023, 11, 14, 22, 13, 20, 0, time.UTC).UnixMicro()
	dec := iceberg.DecimalTypeOf(9, 2)
	P := iceberg.PrimitiveTypes
	cases := []struct {
		name string
		typ  iceberg.Type
		in   string // the JSON of field f
		want any    // nil: null
		err  string // substring of the error
	}{
		{"bool", P.Bool, `true`, true, ""},
		{"bool false", P.Bool, `false`, false, ""},
		{"bool from string", P.Bool, `"true"`, nil, `field f: cannot convert string "true" to boolean`},
		{"int", P.Int32, `-42`, int32(-42), ""},
		{"int max", P.Int32, `2147483647`, int32(2147483647), ""},
		{"int min", P.Int32, `-2147483648`, int32(-2147483648), ""},
		{"int overflow", P.Int32, `2147483648`, nil, "field f: cannot convert number 2147483648 to int: out of range"},
		{"int fraction", P.Int32, `1.5`, nil, "field f: cannot convert number 1.5 to int: has a fraction"},
		{"int integral fraction", P.Int32, `3.0`, int32(3), ""},
		{"int exponent", P.Int32, `2e3`, int32(2000), ""},
		{"int negative exponent", P.Int32, `2500e-2`, int32(25), ""},
		{"int from string", P.Int32, `"1"`, nil, `cannot convert string "1" to int`},
		{"long", P.Int64, `9223372036854775807`, int64(9223372036854775807), ""},
		{"long min", P.Int64, `-9223372036854775808`, int64(-9223372036854775808), ""},
		{"long overflow", P.Int64, `9223372036854775808`, nil, "out of range"},
		{"long huge exponent", P.Int64, `1e999999999`, nil, "out of range"},
		{"long zero exponent", P.Int64, `0e999999999`, int64(0), ""},
		{"long fraction", P.Int64, `-0.5`, nil, "has a fraction"},
		{"double", P.Float64, `2.5`, 2.5, ""},
		{"double from integer", P.Float64, `3`, 3.0, ""},
		{"double exponent", P.Float64, `-1.25E2`, -125.0, ""},
		{"double big exact integer", P.Float64, `9007199254740992`, 9007199254740992.0, ""},
		{"double inexact integer", P.Float64, `9007199254740993`, nil, "not exactly representable"},
		{"double overflow", P.Float64, `1e400`, nil, "out of range"},
		{"double underflow", P.Float64, `1e-400`, nil, "cannot convert number 1e-400 to double: out of range (rounds to zero)"},
		{"double zero with exponent", P.Float64, `0.0e-400`, 0.0, ""},
		{"double subnormal", P.Float64, `5e-324`, 5e-324, ""},
		{"float underflow", P.Float32, `1e-46`, nil, "cannot convert number 1e-46 to float: out of range (rounds to zero)"},
		{"double from string", P.Float64, `"x"`, nil, `field f: cannot convert string "x" to double`},
		{"double from object", P.Float64, `{}`, nil, `field f: cannot convert object to double`},
		{"float", P.Float32, `0.5`, float32(0.5), ""},
		{"float inexact integer", P.Float32, `16777217`, nil, "not exactly representable"},
		{"string", P.String, `"héllo \"q\" \u00e9 \ud83d\ude00 \/"`, "héllo \"q\" é 😀 /", ""},
		{"string empty", P.String, `""`, "", ""},
		// A JSON number or boolean into a string column is its JSON text as
		// written: nothing is lost. Objects and arrays do not convert.
		{"string from integer", P.String, `1941`, "1941", ""},
		{"string from decimal keeps trailing zeros", P.String, `1.50`, "1.50", ""},
		{"string from exponent", P.String, `1e3`, "1e3", ""},
		{"string from negative exponent", P.String, `-2.5E-3`, "-2.5E-3", ""},
		{"string from negative zero", P.String, `-0`, "-0", ""},
		{"string from huge integer", P.String, `123456789012345678901234567890`, "123456789012345678901234567890", ""},
		{"string from true", P.String, `true`, "true", ""},
		{"string from false", P.String, `false`, "false", ""},
		{"string null stays null", P.String, `null`, nil, ""},
		{"string from object", P.String, `{"a":1}`, nil, "cannot convert object to string"},
		{"string from array", P.String, `[1]`, nil, "cannot convert array to string"},
		{"string from bad number", P.String, `01`, nil, "invalid JSON"},
		{"string from bad literal", P.String, `tru`, nil, "unexpected character 't'"},
		// A reason names what is there: no JSON value is not null, a
		// boolean or a number (`nope` is not null, `123abc` not 123).
		{"long from bare word", P.Int64, `nope`, nil, "unexpected character 'n'"},
		{"long from word after a number", P.Int64, `123abc`, nil, "unexpected character 'a'"},
		{"bool from longer word", P.Bool, `trueish`, nil, "unexpected character 'i'"},
		{"long from true", P.Int64, `true`, nil, "cannot convert boolean true to long"},
		// The other direction stays strict.
		{"long from numeric string", P.Int64, `"1941"`, nil, `cannot convert string "1941" to long`},
		{"boolean from string", P.Bool, `"false"`, nil, `cannot convert string "false" to boolean`},
		{"string lone surrogate", P.String, `"\ud83d"`, nil, "invalid JSON"},
		{"timestamptz rfc3339", P.TimestampTz, `"2023-11-14T22:13:20Z"`, ts, ""},
		{"timestamptz offset", P.TimestampTz, `"2023-11-15T00:13:20.5+02:00"`, ts + 500000, ""},
		{"timestamptz micro", P.TimestampTz, `"2023-11-14T22:13:20.000001Z"`, ts + 1, ""},
		{"timestamptz nanos", P.TimestampTz, `"2023-11-14T22:13:20.000000001Z"`, nil, "finer than microseconds"},
		{"timestamptz no zone", P.TimestampTz, `"2023-11-14T22:13:20"`, nil, "missing zone offset"},
		{"timestamptz epoch ms", P.TimestampTz, `1700000000000`, ts, ""},
		{"timestamptz epoch ms fraction", P.TimestampTz, `1700000000000.25`, ts + 250, ""},
		{"timestamptz epoch sub-µs", P.TimestampTz, `1700000000000.0001`, nil, "has a fraction"},
		// Instants int64 nanoseconds cannot hold, and the limits of
		// int64 microseconds: exact, or an error, never wrapped.
		{"timestamptz 9999 ms", P.TimestampTz, `253402300799999`, int64(253402300799999000), ""},
		{"timestamptz 9999 string", P.TimestampTz, `"9999-12-31T23:59:59.999999Z"`, int64(253402300799999999), ""},
		{"timestamptz 0000 string", P.TimestampTz, `"0000-01-01T00:00:00Z"`, int64(-62167219200000000), ""},
		{"timestamptz 2262 ms", P.TimestampTz, `9223372036855`, int64(9223372036855000), ""},
		{"timestamptz before 1677 ms", P.TimestampTz, `-9223372036855`, int64(-9223372036855000), ""},
		{"timestamptz largest ms", P.TimestampTz, `9223372036854775.807`, int64(math.MaxInt64), ""},
		{"timestamptz past largest ms", P.TimestampTz, `9223372036854775.808`, nil, "out of range"},
		{"timestamptz past largest ms integer", P.TimestampTz, `9223372036854776`, nil, "out of range"},
		{"timestamptz smallest ms", P.TimestampTz, `-9223372036854775.808`, int64(math.MinInt64), ""},
		{"timestamptz past smallest ms", P.TimestampTz, `-9223372036854775.809`, nil, "out of range"},
		{"timestamptz exponent ms", P.TimestampTz, `9.223372036854776e15`, nil, "out of range"},
		{"timestamptz bad date", P.TimestampTz, `"2023-02-30T00:00:00Z"`, nil, "RFC 3339"},
		{"timestamp local", P.Timestamp, `"2023-11-14 22:13:20"`, ts, ""},
		{"timestamp with offset to UTC", P.Timestamp, `"2023-11-14T23:13:20+01:00"`, ts, ""},
		{"date", P.Date, `"2023-11-14"`, int32(19675), ""},
		{"date before epoch", P.Date, `"1969-12-31"`, int32(-1), ""},
		{"date epoch days", P.Date, `19675`, int32(19675), ""},
		{"date 9999", P.Date, `"9999-12-31"`, int32(2932896), ""},
		{"date 0000", P.Date, `"0000-01-01"`, int32(-719528), ""},
		{"date largest days", P.Date, `2147483647`, int32(math.MaxInt32), ""},
		{"date past largest days", P.Date, `2147483648`, nil, "out of range"},
		{"date past smallest days", P.Date, `-2147483649`, nil, "out of range"},
		{"date bad", P.Date, `"2023-13-01"`, nil, "YYYY-MM-DD"},
		{"time", P.Time, `"01:02:03.25"`, int64(3723250000), ""},
		{"binary", P.Binary, `"aGVsbG8="`, "hello", ""},
		{"binary escaped slash", P.Binary, `"\/w=="`, "\xff", ""},
		{"binary bad base64", P.Binary, `"!!"`, nil, "invalid base64"},
		{"fixed", iceberg.FixedTypeOf(3), `"AQID"`, "\x01\x02\x03", ""},
		{"fixed wrong length", iceberg.FixedTypeOf(4), `"AQID"`, nil, "3 bytes, want 4"},
		{"uuid", P.UUID, `"f79c3e09-677c-4d6b-a4c0-9a7b5d5e9a01"`, "f79c3e09-677c-4d6b-a4c0-9a7b5d5e9a01", ""},
		{"uuid bad", P.UUID, `"f79c3e09677c4d6ba4c09a7b5d5e9a01"`, nil, "to uuid"},
		{"decimal number", dec, `12.34`, "1234", ""},
		{"decimal string", dec, `"-12.3"`, "-1230", ""},
		{"decimal integer", dec, `7`, "700", ""},
		{"decimal trailing zeros", dec, `1.500`, "150", ""},
		{"decimal exponent", dec, `1.5e2`, "15000", ""},
		{"decimal scale loss", dec, `1.234`, nil, "more than 2 digits after the point"},
		{"decimal precision", dec, `12345678.9`, nil, "more than 9 digits"},
		{"decimal 38", iceberg.DecimalTypeOf(38, 0), `"99999999999999999999999999999999999999"`, "99999999999999999999999999999999999999", ""},
		{"decimal bad string", dec, `"1,5"`, nil, "not a number"},
		{"null", P.Int64, `null`, nil, ""},
		{"struct", &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 2, Name: "a", Type: P.Int64}, {ID: 3, Name: "b", Type: P.String}}},
			`{"b":"x","zz":[1,{"q":null}],"a":1}`, `{"a":1,"b":"x"}`, ""},
		{"struct duplicate key", &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 2, Name: "a", Type: P.Int64}}},
			`{"a":1,"a":2}`, nil, `field f.a: key "a" given twice for the field (mink.json.field-matching = exact)`},
		{"struct duplicate key null first", &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 2, Name: "a", Type: P.Int64}}},
			`{"a":null,"a":2}`, nil, `field f.a: key "a" given twice`},
		{"struct only unknown keys", &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 2, Name: "a", Type: P.Int64}}},
			`{"A":1}`, nil, `field f: no key of the object matches a field of the struct (mink.json.field-matching = exact); unknown fields: "f.A"`},
		{"struct missing optional", &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 2, Name: "a", Type: P.Int64}}},
			`{}`, `{"a":null}`, ""},
		{"struct missing required", &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 2, Name: "a", Type: P.Int64, Required: true}}},
			`{}`, nil, "field f.a: required field is missing"},
		{"struct null required", &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 2, Name: "a", Type: P.Int64, Required: true}}},
			`{"a":null}`, nil, "field f.a: required field is null"},
		{"list", &iceberg.ListType{ElementID: 2, Element: P.Float64},
			`[1, 2.5, null]`, `[1,2.5,null]`, ""},
		{"list empty", &iceberg.ListType{ElementID: 2, Element: P.Float64}, `[]`, `[]`, ""},
		{"list bad element", &iceberg.ListType{ElementID: 2, Element: P.Float64},
			`[1, "x"]`, nil, `field f[1]: cannot convert string "x" to double`},
		{"list required element null", &iceberg.ListType{ElementID: 2, Element: P.Float64, ElementRequired: true},
			`[null]`, nil, "field f[0]: required element is null"},
		{"list from object", &iceberg.ListType{ElementID: 2, Element: P.Float64}, `{}`, nil, "cannot convert object to list<double>"},
		{"list of structs", &iceberg.ListType{ElementID: 2, Element: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 3, Name: "a", Type: P.Int32}}}},
			`[{"a":1},{"a":2},null]`, `[{"a":1},{"a":2},null]`, ""},
		{"map", &iceberg.MapType{KeyID: 2, KeyType: P.String, ValueID: 3, ValueType: P.Int64},
			`{"x":1,"y":null}`, `[{"key":"x","value":1},{"key":"y","value":null}]`, ""},
		{"map bad value", &iceberg.MapType{KeyID: 2, KeyType: P.String, ValueID: 3, ValueType: P.Int64},
			`{"x":1.5}`, nil, `field f["x"]: cannot convert number 1.5 to long: has a fraction`},
		{"map duplicate key", &iceberg.MapType{KeyID: 2, KeyType: P.String, ValueID: 3, ValueType: P.Int64},
			`{"x":1,"x":2}`, nil, `duplicate map key "x"`},
		{"invalid json", P.Int64, `1 2`, nil, "invalid JSON"},
		{"trailing comma", P.Int64, `1,`, nil, "invalid JSON"},
		{"bad literal", P.Bool, `tru`, nil, "unexpected character 't'"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec, _, err := rows(t, one(c.typ, false), `{"f":`+c.in+`}`)
			if c.err != "" {
				require.Error(t, err)
				require.Contains(t, err.Error(), c.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, c.want, scalar(rec.Column(1)))
		})
	}
}

func TestJSONTopLevel(t *testing.T) {
	sc := one(iceberg.PrimitiveTypes.Int64, false)
	for _, in := range []string{`[1]`, `1`, `"x"`, `null`, ``, `  `, `{"f":1} x`, `{"f":1`, `{"f" 1}`, `{f:1}`, `{"f":1,}`, "{\"f\":\"a\x01\"}"} {
		_, _, err := rows(t, sc, in)
		require.Error(t, err, in)
	}
	_, _, err := rows(t, sc, `[1]`)
	require.EqualError(t, err, "value is not a JSON object (found array)")
	_, _, err = rows(t, sc, `null`)
	require.EqualError(t, err, "value is not a JSON object (found null)")
	// Not JSON at all is a syntax error at its first byte, not "null".
	for _, in := range []string{`not json at all`, `nope`, `nul`, `trueish`, `123abc`} {
		_, _, err = rows(t, sc, in)
		require.ErrorContains(t, err, "not a JSON value", in)
		require.NotContains(t, err.Error(), "found", in)
	}

	sc2, err := codec.TableSchema(codec.Raw, codec.JSON, sc)
	require.NoError(t, err)
	dec, err := codec.NewDecoder(codec.JSON, sc2, codec.JSONOptions{})
	require.NoError(t, err)
	require.ErrorContains(t, dec.Decode(nil), "tombstone")
	require.ErrorContains(t, dec.Decode([]byte("{\"f\":1,\"g\":\"\xff\"}")), "UTF-8")
}

func TestJSONUnknownCounted(t *testing.T) {
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "a", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 2, Name: "s", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 3, Name: "b", Type: iceberg.PrimitiveTypes.Int64}}}})
	rec, dec, err := rows(t, sc, `{"a":1,"x":{"deep":[1,2,{"k":"v"}]},"s":{"b":2,"y":null,"z":true},"w":-1.5e3}`)
	require.NoError(t, err)
	require.Equal(t, 4, dec.Unknown())
	require.Equal(t, int64(1), scalar(rec.Column(1)))
	require.Equal(t, `{"b":2}`, scalar(rec.Column(2)))
}

// TestJSONNoHalfAppend checks that a failed record leaves the builders
// untouched: the next good record lands in row 0.
func TestJSONNoHalfAppend(t *testing.T) {
	sc, err := codec.TableSchema(codec.Raw, codec.JSON, iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "a", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 2, Name: "b", Type: iceberg.PrimitiveTypes.Int64}))
	require.NoError(t, err)
	dec, err := codec.NewDecoder(codec.JSON, sc, codec.JSONOptions{})
	require.NoError(t, err)
	asc, err := table.SchemaToArrowSchema(sc, nil, true, false)
	require.NoError(t, err)
	rb := array.NewRecordBuilder(memory.DefaultAllocator, asc)
	defer rb.Release()
	require.Error(t, dec.Decode([]byte(`{"a":1,"b":"bad"}`)))
	require.NoError(t, dec.Decode([]byte(`{"a":7,"b":8}`)))
	rb.Field(0).AppendNull()
	dec.Append(rb.Fields()[1:])
	rec := rb.NewRecordBatch()
	defer rec.Release()
	require.EqualValues(t, 1, rec.NumRows())
	require.Equal(t, int64(7), rec.Column(1).(*array.Int64).Value(0))
	require.Equal(t, int64(8), rec.Column(2).(*array.Int64).Value(0))
}

func TestJSONUSGSShape(t *testing.T) {
	sc := mustSchema(t, testkit.USGSSchema)
	rec, dec, err := rows(t, sc,
		`{"type":"Feature","properties":{"mag":2.5,"place":"10 km SW of X","time":1700000000000,"updated":"2023-11-14T22:13:21Z","felt":null,"extra":"x"},"geometry":{"type":"Point","coordinates":[-117.1,35.2,7.5]},"id":"ci123"}`,
		`{"type":"Feature","properties":{"mag":3,"time":1700000000001},"geometry":{"type":"Point","coordinates":[-117,35,0]},"id":"ci124"}`,
	)
	require.NoError(t, err)
	require.Equal(t, 0, dec.Unknown()) // of the last value
	props := rec.Column(2).(*array.Struct)
	mag := props.Field(0).(*array.Float64)
	require.Equal(t, 2.5, mag.Value(0))
	require.Equal(t, 3.0, mag.Value(1))
	tm := props.Field(2).(*array.Timestamp)
	require.Equal(t, arrow.Timestamp(1700000000000000), tm.Value(0))
	require.Equal(t, arrow.Timestamp(1700000000001000), tm.Value(1))
	require.True(t, props.Field(5).IsNull(0)) // felt
	coords := rec.Column(3).(*array.Struct).Field(1).(*array.List)
	vals := coords.ListValues().(*array.Float64)
	require.Equal(t, []float64{-117.1, 35.2, 7.5, -117, 35, 0}, vals.Float64Values())
	require.Equal(t, "ci124", rec.Column(4).(*array.String).Value(1))

	_, _, err = rows(t, sc, `{"type":"Feature","properties":{"mag":"x","time":1},"id":"a"}`)
	require.EqualError(t, err, `field properties.mag: cannot convert string "x" to double`)
	_, _, err = rows(t, sc, `{"type":"Feature","properties":{"mag":1},"id":"a"}`)
	require.EqualError(t, err, `field properties.time: required field is missing`)
}

// TestJSONUSGSFile decodes the real USGS week feed, when present.
func TestJSONUSGSFile(t *testing.T) {
	features := usgsFeatures(t)
	sc := mustSchema(t, testkit.USGSSchema)
	rec, _, err := rows(t, sc, features...)
	require.NoError(t, err)
	require.EqualValues(t, len(features), rec.NumRows())
}

const usgsPath = "/work/shared/data/usgs-earthquakes-week.geojson"

func usgsFeatures(t testing.TB) []string {
	b, err := os.ReadFile(usgsPath)
	if os.IsNotExist(err) {
		t.Skip("no USGS feed at " + usgsPath)
	}
	require.NoError(t, err)
	var fc struct {
		Features []json.RawMessage `json:"features"`
	}
	require.NoError(t, json.Unmarshal(b, &fc))
	out := make([]string, len(fc.Features))
	for i, f := range fc.Features {
		out[i] = string(f)
	}
	return out
}

func TestStringAndRaw(t *testing.T) {
	sc, err := codec.TableSchema(codec.Raw, codec.String, nil)
	require.NoError(t, err)
	dec, err := codec.NewDecoder(codec.String, sc, codec.JSONOptions{})
	require.NoError(t, err)
	require.NoError(t, dec.Decode([]byte("héllo")))
	require.NoError(t, dec.Decode(nil))
	require.ErrorContains(t, dec.Decode([]byte{0xff}), "UTF-8")

	raw, err := codec.TableSchema(codec.Raw, codec.Raw, nil)
	require.NoError(t, err)
	dec, err = codec.NewDecoder(codec.Raw, raw, codec.JSONOptions{})
	require.NoError(t, err)
	require.NoError(t, dec.Decode([]byte{0xff, 0}))
	require.NoError(t, dec.Decode(nil))
	_, err = codec.NewDecoder(codec.String, raw, codec.JSONOptions{})
	require.Error(t, err)

	require.NoError(t, codec.CheckKey(codec.Raw, []byte{0xff}))
	require.NoError(t, codec.CheckKey(codec.String, nil))
	require.ErrorContains(t, codec.CheckKey(codec.String, []byte{0xff}), "UTF-8")
	require.ErrorIs(t, codec.CheckKey(codec.JSON, []byte("{}")), codec.ErrUnsupported)
}

func TestJSONLargeMap(t *testing.T) {
	m := &iceberg.MapType{KeyID: 2, KeyType: iceberg.PrimitiveTypes.String, ValueID: 3, ValueType: iceberg.PrimitiveTypes.Int64}
	var b []byte
	b = append(b, `{"f":{`...)
	for i := range 100 {
		if i > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, `"k%d":%d`, i, i)
	}
	good := string(b) + "}}"
	rec, _, err := rows(t, one(m, false), good)
	require.NoError(t, err)
	require.Equal(t, 100, rec.Column(1).(*array.Map).Keys().Len())
	_, _, err = rows(t, one(m, false), string(b)+`,"k99":1}}`)
	require.ErrorContains(t, err, `duplicate map key "k99"`)
	_, _, err = rows(t, one(m, false), string(b)+`,"k3":1}}`)
	require.ErrorContains(t, err, `duplicate map key "k3"`)
}
