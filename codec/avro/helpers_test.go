package avro_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	hamba "github.com/hamba/avro/v2"

	"github.com/minkhq/mink/codec/avro"
	"github.com/minkhq/mink/codec/wire"
)

// valueID is the id of the single value column of a non-record schema in
// these tests (Convert's placeholder ids start at 1).
const valueID = 10000

// columns returns the value columns of target as a table schema.
func columns(target iceberg.Type) *iceberg.Schema {
	if st, ok := target.(*iceberg.StructType); ok {
		return iceberg.NewSchema(0, st.FieldList...)
	}
	return iceberg.NewSchema(0, iceberg.NestedField{ID: valueID, Name: "value", Type: target})
}

// encode encodes v with hamba/avro's encoder, an implementation
// independent of the decoder under test.
func encode(t testing.TB, schema string, v any) []byte {
	t.Helper()
	s, err := hamba.ParseWithCache(schema, "", &hamba.SchemaCache{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := hamba.Marshal(s, v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// rows decodes payloads written with schema into target (Convert(schema)
// when nil), builds Arrow records through table.SchemaToArrowSchema, and
// returns each row as JSON (array.RecordToJSON).
func rows(t testing.TB, schema *wire.Schema, target iceberg.Type, payloads ...[]byte) []string {
	t.Helper()
	if target == nil {
		var err error
		if target, err = avro.Convert(schema); err != nil {
			t.Fatal(err)
		}
	}
	dec, err := avro.NewDecoder(schema, target)
	if err != nil {
		t.Fatal(err)
	}
	return rowsWith(t, dec, target, payloads...)
}

// rowsWith is rows with a decoder of its own.
func rowsWith(t testing.TB, dec *avro.Decoder, target iceberg.Type, payloads ...[]byte) []string {
	t.Helper()
	asc, err := table.SchemaToArrowSchema(columns(target), nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	rb := array.NewRecordBuilder(memory.DefaultAllocator, asc)
	defer rb.Release()
	for _, p := range payloads {
		if err := dec.Decode(p); err != nil {
			t.Fatal(err)
		}
		dec.Append(rb.Fields())
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	if err := array.RecordToJSON(rec, &buf); err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
}

func avroSchema(text string) *wire.Schema {
	return &wire.Schema{Type: wire.TypeAvro, Text: text}
}

// record wraps one field of type typ (Avro JSON) in a record schema.
func record(typ string) string {
	return `{"type":"record","name":"R","fields":[{"name":"f","type":` + typ + `}]}`
}
