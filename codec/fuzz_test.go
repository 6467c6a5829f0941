package codec_test

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"testing"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/minkhq/mink/codec"
	"github.com/minkhq/mink/internal/testkit"
)

// fuzzEverything declares one column of every primitive type the json
// decoder maps (docs/design.md §4.2) and every container: structs in
// structs, lists of structs, maps of lists, required and optional.
const fuzzEverything = `{"type":"struct","schema-id":0,"fields":[
 {"id":1,"name":"b","required":false,"type":"boolean"},
 {"id":2,"name":"i","required":false,"type":"int"},
 {"id":3,"name":"l","required":false,"type":"long"},
 {"id":4,"name":"f","required":false,"type":"float"},
 {"id":5,"name":"d","required":false,"type":"double"},
 {"id":6,"name":"dec","required":false,"type":"decimal(9, 2)"},
 {"id":7,"name":"dec38","required":false,"type":"decimal(38, 10)"},
 {"id":8,"name":"date","required":false,"type":"date"},
 {"id":9,"name":"time","required":false,"type":"time"},
 {"id":10,"name":"ts","required":false,"type":"timestamp"},
 {"id":11,"name":"tstz","required":false,"type":"timestamptz"},
 {"id":12,"name":"s","required":false,"type":"string"},
 {"id":13,"name":"uid","required":false,"type":"uuid"},
 {"id":14,"name":"fx","required":false,"type":"fixed[4]"},
 {"id":15,"name":"bin","required":false,"type":"binary"},
 {"id":16,"name":"id","required":true,"type":"string"},
 {"id":17,"name":"st","required":false,"type":{"type":"struct","fields":[
   {"id":18,"name":"n","required":true,"type":"long"},
   {"id":19,"name":"inner","required":false,"type":{"type":"struct","fields":[
     {"id":20,"name":"Zip","required":false,"type":"string"},
     {"id":21,"name":"at","required":false,"type":"timestamptz"}]}}]}},
 {"id":22,"name":"items","required":false,"type":{"type":"list","element-id":23,"element-required":true,"element":{"type":"struct","fields":[
   {"id":24,"name":"sku","required":true,"type":"string"},
   {"id":25,"name":"qty","required":false,"type":"int"}]}}},
 {"id":26,"name":"tags","required":false,"type":{"type":"map","key-id":27,"key":"string","value-id":28,"value-required":false,
   "value":{"type":"list","element-id":29,"element-required":false,"element":"double"}}},
 {"id":30,"name":"grid","required":false,"type":{"type":"list","element-id":31,"element-required":false,
   "element":{"type":"list","element-id":32,"element-required":true,"element":"long"}}}
]}`

// fuzzTarget is one decoder of FuzzDecodeJSON and a second one, fresh for
// every input, that its reused buffers are checked against.
type fuzzTarget struct {
	sc   *iceberg.Schema
	opts codec.JSONOptions
	dec  *codec.Decoder
	asc  *arrow.Schema
}

// fuzzTargets are the (schema, options) pairs FuzzDecodeJSON picks from:
// the schema of every type and the USGS feed's, each with exact and with
// case-insensitive matching, unknown fields ignored or dead-lettered.
func fuzzTargets(t testing.TB) []fuzzTarget {
	var out []fuzzTarget
	for _, declared := range []string{fuzzEverything, testkit.USGSSchema} {
		sc, err := codec.TableSchema(codec.Raw, codec.JSON, mustSchema(t, declared))
		if err != nil {
			t.Fatal(err)
		}
		asc, err := table.SchemaToArrowSchema(sc, nil, true, false)
		if err != nil {
			t.Fatal(err)
		}
		for _, opts := range []codec.JSONOptions{
			{},
			{FieldMatching: codec.MatchCaseInsensitive},
			{UnknownFields: codec.UnknownDeadLetter},
		} {
			dec, err := codec.NewDecoder(codec.JSON, sc, opts)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, fuzzTarget{sc: sc, opts: opts, dec: dec, asc: asc})
		}
	}
	return out
}

// decodeRow decodes value with dec into a one-row record of the value
// columns (_kafka left null), or returns Decode's error.
func decodeRow(dec *codec.Decoder, asc *arrow.Schema, value []byte) (arrow.RecordBatch, error) {
	if err := dec.Decode(value); err != nil {
		return nil, err
	}
	rb := array.NewRecordBuilder(memory.DefaultAllocator, asc)
	defer rb.Release()
	rb.Field(0).AppendNull()
	dec.Append(rb.Fields()[1:])
	return rb.NewRecordBatch(), nil
}

// FuzzDecodeJSON: the json decoder never panics; what it refuses has a
// reason (the dead-letter error); what it accepts is JSON by RFC 8259 (it
// is never more lenient than encoding/json's grammar), fills exactly one
// row whose strings are valid UTF-8 (Iceberg strings), decodes the same
// with a fresh decoder as with one reused across inputs (no state leaks
// from one record to the next), and agrees with encoding/json on the
// top-level scalars it can compare (exact matching: b, l, d, s).
func FuzzDecodeJSON(f *testing.F) {
	f.Add(uint8(0), []byte(`{"id":"x"}`))
	f.Add(uint8(0), []byte(`{"b":true,"i":-2147483648,"l":9223372036854775807,"f":3.4028235e38,"d":-0.0,"dec":"1234567.89","dec38":1e-10,`+
		`"date":"2024-02-29","time":"23:59:59.999999","ts":"2024-03-09T12:00:00.123456","tstz":1700000000000,"s":"ü\u00e9\ud83d\ude00",`+
		`"uid":"0189dbf1-3c2d-7c8e-8a4b-2f1e0d9c8b7a","fx":"AQIDBA==","bin":"","id":"k","st":{"n":1,"inner":{"Zip":"02139","at":"2024-03-09T12:00:00+01:00"}},`+
		`"items":[{"sku":"a","qty":1},{"sku":"b","qty":null}],"tags":{"x":[1.5,null],"y":null},"grid":[[1,2],[],null]}`))
	f.Add(uint8(1), []byte(`{"ID":"x","ST":{"N":2,"INNER":{"zip":"1"}}}`))
	f.Add(uint8(2), []byte(`{"id":"x","nope":{"deep":[1,{"k":"v"}]}}`))
	f.Add(uint8(0), []byte(`{"id":"x","tags":{"a":[],"a":[]}}`))
	f.Add(uint8(0), []byte(`{"id":"x","l":1e999999999,"i":2.5}`))
	f.Add(uint8(0), []byte(`{"id":"\ud800"}`))
	f.Add(uint8(0), []byte(`{"id":"x"} {"id":"y"}`))
	f.Add(uint8(0), []byte("{\"id\":\"\xff\"}"))
	f.Add(uint8(3), []byte(`{"type":"Feature","properties":{"mag":2.5,"place":"10 km SW of X","time":1700000000000,"updated":"2023-11-14T22:13:21Z","felt":null},`+
		`"geometry":{"type":"Point","coordinates":[-117.1,35.2,7.5]},"id":"ci123"}`))
	targets := fuzzTargets(f)
	f.Fuzz(func(t *testing.T, which uint8, value []byte) {
		tg := targets[int(which)%len(targets)]
		in := bytes.Clone(value) // Append may read value: it must not change
		rec, err := decodeRow(tg.dec, tg.asc, value)
		if !bytes.Equal(in, value) {
			t.Fatalf("Decode changed its input")
		}
		fresh, err2 := codec.NewDecoder(codec.JSON, tg.sc, tg.opts)
		if err2 != nil {
			t.Fatal(err2)
		}
		rec2, err2 := decodeRow(fresh, tg.asc, value)
		if (err == nil) != (err2 == nil) || err != nil && err.Error() != err2.Error() {
			t.Fatalf("reused decoder: %v; fresh decoder: %v", err, err2)
		}
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an error without a reason")
			}
			return
		}
		defer rec.Release()
		defer rec2.Release()
		if !json.Valid(value) {
			t.Fatalf("Decode accepted what is not JSON: %q", value)
		}
		if rec.NumRows() != 1 {
			t.Fatalf("%d rows", rec.NumRows())
		}
		if !array.RecordEqual(rec, rec2) {
			t.Fatalf("a reused decoder's row differs from a fresh one's")
		}
		for i, c := range rec.Columns() {
			if c.Len() != 1 {
				t.Fatalf("column %d: %d values", i, c.Len())
			}
			checkUTF8(t, c)
		}
		if tg.opts == (codec.JSONOptions{}) && tg.sc.Fields()[1].Name == "b" {
			sameScalars(t, tg.sc, rec, value)
		}
	})
}

// checkUTF8 fails when a string of a (at any depth) is not valid UTF-8.
func checkUTF8(t *testing.T, a arrow.Array) {
	t.Helper()
	switch a := a.(type) {
	case *array.String:
		for i := 0; i < a.Len(); i++ {
			if a.IsValid(i) && !utf8.ValidString(a.Value(i)) {
				t.Fatalf("string value %q is not valid UTF-8", a.Value(i))
			}
		}
	case *array.Struct:
		for i := 0; i < a.NumField(); i++ {
			checkUTF8(t, a.Field(i))
		}
	case *array.List:
		checkUTF8(t, a.ListValues())
	case *array.Map:
		checkUTF8(t, a.Keys())
		checkUTF8(t, a.Items())
	}
}

// sameScalars compares the top-level columns b, l, d and s of the
// everything schema with encoding/json's reading of value, where the value
// is of the column's own JSON type.
func sameScalars(t *testing.T, sc *iceberg.Schema, rec arrow.RecordBatch, value []byte) {
	t.Helper()
	var obj map[string]json.RawMessage
	if json.Unmarshal(value, &obj) != nil {
		t.Fatalf("encoding/json cannot read an object Decode accepted: %q", value)
	}
	col := func(name string) arrow.Array {
		f, ok := sc.FindFieldByName(name)
		if !ok {
			t.Fatalf("no column %s", name)
		}
		for i, top := range sc.Fields() {
			if top.ID == f.ID {
				return rec.Column(i)
			}
		}
		t.Fatalf("column %s is not top-level", name)
		return nil
	}
	if raw, ok := obj["s"]; ok && len(raw) > 0 && raw[0] == '"' {
		var want string
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatal(err)
		}
		if got := col("s").(*array.String).Value(0); got != want {
			t.Fatalf("s: decoded %q, encoding/json %q", got, want)
		}
	}
	if raw, ok := obj["b"]; ok && (string(raw) == "true" || string(raw) == "false") {
		if got := col("b").(*array.Boolean).Value(0); got != (string(raw) == "true") {
			t.Fatalf("b: decoded %v from %s", got, raw)
		}
	}
	if raw, ok := obj["l"]; ok {
		if want, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
			if got := col("l").(*array.Int64).Value(0); got != want {
				t.Fatalf("l: decoded %d from %s", got, raw)
			}
		}
	}
	if raw, ok := obj["d"]; ok && string(raw) != "null" {
		want, err := strconv.ParseFloat(string(raw), 64)
		if err == nil && !math.IsInf(want, 0) {
			got := col("d").(*array.Float64).Value(0)
			if math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("d: decoded %v from %s, strconv %v", got, raw, want)
			}
		}
	}
}
