package codec_test

import (
	"os"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/minkhq/mink/codec"
	"github.com/minkhq/mink/codec/jsonschema"
	"github.com/minkhq/mink/codec/wire"
	"github.com/minkhq/mink/internal/testkit"
)

// BenchmarkDecodeJSON measures the JSON decoder alone (Decode and Append
// into Arrow builders) over the USGS week feed. MB/s counts value bytes.
func BenchmarkDecodeJSON(b *testing.B) {
	features := usgsFeatures(b)
	sc, err := codec.TableSchema(codec.Raw, codec.JSON, mustSchema(b, testkit.USGSSchema))
	if err != nil {
		b.Fatal(err)
	}
	dec, err := codec.NewDecoder(codec.JSON, sc, codec.JSONOptions{})
	if err != nil {
		b.Fatal(err)
	}
	asc, err := table.SchemaToArrowSchema(sc, nil, true, false)
	if err != nil {
		b.Fatal(err)
	}
	values := make([][]byte, len(features))
	var size int64
	for i, f := range features {
		values[i] = []byte(f)
		size += int64(len(f))
	}
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		rb := array.NewRecordBuilder(memory.DefaultAllocator, asc)
		cols := rb.Fields()[1:]
		for _, v := range values {
			if err := dec.Decode(v); err != nil {
				b.Fatal(err)
			}
			dec.Append(cols)
		}
		rb.Release()
	}
	b.ReportMetric(float64(len(values)*b.N)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkDecodeJSONSchema is BenchmarkDecodeJSON for value format
// json-schema: the USGS features framed with the earthquakes JSON Schema,
// each also validated against it (docs/formats.md, "JSON Schema").
func BenchmarkDecodeJSONSchema(b *testing.B) {
	features := usgsFeatures(b)
	text, err := os.ReadFile("../e2e/testdata/earthquakes.schema.json")
	if err != nil {
		b.Fatal(err)
	}
	ws := &wire.Schema{ID: 7, Type: wire.TypeJSON, Text: string(text)}
	typ, err := jsonschema.Convert(ws)
	if err != nil {
		b.Fatal(err)
	}
	sc, err := codec.TableSchema(codec.Raw, codec.JSONSchema, iceberg.NewSchema(0, typ.(*iceberg.StructType).FieldList...))
	if err != nil {
		b.Fatal(err)
	}
	dec, err := codec.NewDecoderConfig(sc, codec.DecoderConfig{Format: codec.JSONSchema, KeyFormat: codec.Raw, Writers: jsWriters{ws}})
	if err != nil {
		b.Fatal(err)
	}
	asc, err := table.SchemaToArrowSchema(sc, nil, true, false)
	if err != nil {
		b.Fatal(err)
	}
	values := make([][]byte, len(features))
	var size int64
	for i, f := range features {
		values[i] = append(wire.AppendHeader(nil, 7, nil), f...)
		size += int64(len(f))
	}
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		rb := array.NewRecordBuilder(memory.DefaultAllocator, asc)
		cols := rb.Fields()[1:]
		for _, v := range values {
			if err := dec.Decode(v); err != nil {
				b.Fatal(err)
			}
			dec.Append(cols)
		}
		rb.Release()
	}
	b.ReportMetric(float64(len(values)*b.N)/b.Elapsed().Seconds(), "records/s")
}
