package avro_test

import (
	"math/big"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/table"

	"github.com/minkhq/mink/codec/avro"
)

// everyValue is a value of the schema everything.
func everyValue() map[string]any {
	ts := time.Date(2024, 3, 9, 12, 0, 0, 0, time.UTC)
	return map[string]any{
		"b": true, "i": int32(-3), "l": int64(1) << 50, "f": float32(2.5), "d": -0.25, "s": "ü",
		"by": []byte{0, 1}, "e": "B", "fx": [4]byte{9, 8, 7, 6},
		"opt": int64(4), "opt2": nil,
		"u":   map[string]any{"string": "x"},
		"un":  map[string]any{"t.B": map[string]any{"x": int32(1)}},
		"m":   map[string]any{"n": nil}, // one key: Go maps have no order
		"a":   []any{map[string]any{"sku": "s1", "qty": int32(2)}, map[string]any{"sku": "s2", "qty": nil}},
		"c":   map[string]any{"id": int64(5), "tags": []any{"a", "b"}},
		"c2":  nil,
		"dec": big.NewRat(-123456789, 10_000_000_000), "decf": big.NewRat(12345, 100),
		"uid": "0189dbf1-3c2d-7c8e-8a4b-2f1e0d9c8b7a", "uidf": [16]byte{1, 2, 3},
		"date": ts, "tms": time.Hour, "tus": time.Minute,
		"tsms": ts, "tsus": ts, "tsns": ts.UnixNano(), "ltsms": ts, "ltsus": ts, "ltsns": ts.UnixNano(),
		"odd": int64(1),
	}
}

// fuzzSchemas are the writer schemas FuzzDecode picks from: every
// mapping row, items of no size, a top-level union, nested containers.
var fuzzSchemas = []string{
	everything,
	record(`{"type":"array","items":{"type":"record","name":"E","fields":[]}}`),
	`["null","int",{"type":"map","values":{"type":"array","items":["null","string"]}}]`,
	record(`{"type":"map","values":{"type":"array","items":{"type":"fixed","name":"Z","size":0}}}`),
	// recursive: the JSON text of every Avro type
	`{"type":"record","name":"T","fields":[{"name":"b","type":"boolean"},{"name":"f","type":"float"},{"name":"d","type":"double"},
	 {"name":"s","type":"string"},{"name":"by","type":"bytes"},{"name":"x","type":{"type":"fixed","name":"X","size":2}},
	 {"name":"e","type":{"type":"enum","name":"En","symbols":["A","B"]}},{"name":"l","type":"long"},
	 {"name":"kids","type":{"type":"array","items":"T"}},{"name":"m","type":{"type":"map","values":["null","int","T"]}}]}`,
}

// FuzzDecode: Decode never panics, and whatever it accepts, Append
// appends into builders of the table's Arrow schema as one row.
func FuzzDecode(f *testing.F) {
	p := encode(f, everything, everyValue())
	f.Add(uint8(0), p)
	f.Add(uint8(0), p[:len(p)/2])
	f.Add(uint8(0), []byte{})
	f.Add(uint8(1), zz(nil, -3, 0, 0))
	f.Add(uint8(2), zz(nil, 4, 1, 2, 'k', 1, 2, 2, 'v', 0, 0, 0))
	f.Add(uint8(3), zz(nil, 1, 2, 'k', 5, 0, 0))
	f.Add(uint8(4), cat([]byte{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, zz(nil, 0, 0), []byte{'a', 'b'}, zz(nil, 1, 0, 1),
		[]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, zz(nil, 0, 0), []byte{'c', 'd'}, zz(nil, 0, 0, 0, 0, 0)))
	type target struct {
		dec *avro.Decoder
		asc *arrow.Schema
	}
	var targets []target
	for _, text := range fuzzSchemas {
		s := avroSchema(text)
		typ, err := avro.Convert(s)
		if err != nil {
			f.Fatal(err)
		}
		dec, err := avro.NewDecoder(s, typ)
		if err != nil {
			f.Fatal(err)
		}
		asc, err := table.SchemaToArrowSchema(columns(typ), nil, true, false)
		if err != nil {
			f.Fatal(err)
		}
		targets = append(targets, target{dec, asc})
	}
	f.Fuzz(func(t *testing.T, which uint8, payload []byte) {
		tg := targets[int(which)%len(targets)]
		if tg.dec.Decode(payload) != nil {
			return
		}
		rb := array.NewRecordBuilder(memory.DefaultAllocator, tg.asc)
		defer rb.Release()
		tg.dec.Append(rb.Fields())
		rec := rb.NewRecordBatch()
		defer rec.Release()
		if rec.NumRows() != 1 {
			t.Fatalf("%d rows", rec.NumRows())
		}
	})
}

// TestEverything decodes one value of every mapping row in one record.
func TestEverything(t *testing.T) {
	got := rows(t, avroSchema(everything), nil, encode(t, everything, everyValue()))
	want := `{"a":[{"qty":2,"sku":"s1"},{"qty":null,"sku":"s2"}],"b":true,"by":"AAE=","c":{"id":5,"tags":["a","b"]},"c2":null,"d":-0.25,"date":"2024-03-09",` +
		`"dec":"-0.0123456789","decf":"123.45","e":"B","f":2.5,"fx":"CQgHBg==","i":-3,"l":1125899906842624,"ltsms":"2024-03-09T12:00:00","ltsns":"2024-03-09T12:00:00",` +
		`"ltsus":"2024-03-09T12:00:00","m":[{"key":"n","value":null}],"odd":1,"opt":4,"opt2":null,"s":"ü","tms":"01:00:00","tsms":"2024-03-09T12:00:00Z",` +
		`"tsns":"2024-03-09T12:00:00Z","tsus":"2024-03-09T12:00:00Z","tus":"00:01:00","u":{"field0":null,"field1":"x","tag":1},"uid":"0189dbf1-3c2d-7c8e-8a4b-2f1e0d9c8b7a",` +
		`"uidf":"01020300-0000-0000-0000-000000000000","un":{"field0":null,"field1":{"x":1},"tag":1}}`
	if len(got) != 1 || got[0] != want {
		t.Fatalf("got %q\nwant %s", got, want)
	}
}
