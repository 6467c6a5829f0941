package avro_test

import (
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"

	"github.com/minkhq/mink/codec/avro"
	"github.com/minkhq/mink/codec/wire"
)

var update = flag.Bool("update", false, "rewrite golden files")

// everything has one field of every mapping row, nested where it matters
// for field ids and required-ness.
const everything = `{"type":"record","name":"Every","namespace":"t","fields":[
 {"name":"b","type":"boolean","doc":"a flag"},
 {"name":"i","type":"int"},
 {"name":"l","type":"long"},
 {"name":"f","type":"float"},
 {"name":"d","type":"double"},
 {"name":"s","type":"string"},
 {"name":"by","type":"bytes"},
 {"name":"e","type":{"type":"enum","name":"E","symbols":["A","B"]}},
 {"name":"fx","type":{"type":"fixed","name":"F","size":4}},
 {"name":"opt","type":["null","long"]},
 {"name":"opt2","type":["string","null"]},
 {"name":"u","type":["int","string"]},
 {"name":"un","type":["null","int",{"type":"record","name":"B","fields":[{"name":"x","type":"int"}]}]},
 {"name":"m","type":{"type":"map","values":["null","string"]}},
 {"name":"a","type":{"type":"array","items":{"type":"record","name":"Item","fields":[{"name":"sku","type":"string"},{"name":"qty","type":["null","int"]}]}}},
 {"name":"c","type":{"type":"record","name":"Customer","fields":[{"name":"id","type":"long"},{"name":"tags","type":{"type":"array","items":"string"}}]}},
 {"name":"c2","type":["null","Customer"]},
 {"name":"dec","type":{"type":"bytes","logicalType":"decimal","precision":38,"scale":10}},
 {"name":"decf","type":{"type":"fixed","name":"DF","size":5,"logicalType":"decimal","precision":10,"scale":2}},
 {"name":"uid","type":{"type":"string","logicalType":"uuid"}},
 {"name":"uidf","type":{"type":"fixed","name":"UF","size":16,"logicalType":"uuid"}},
 {"name":"date","type":{"type":"int","logicalType":"date"}},
 {"name":"tms","type":{"type":"int","logicalType":"time-millis"}},
 {"name":"tus","type":{"type":"long","logicalType":"time-micros"}},
 {"name":"tsms","type":{"type":"long","logicalType":"timestamp-millis"}},
 {"name":"tsus","type":{"type":"long","logicalType":"timestamp-micros"}},
 {"name":"tsns","type":{"type":"long","logicalType":"timestamp-nanos"}},
 {"name":"ltsms","type":{"type":"long","logicalType":"local-timestamp-millis"}},
 {"name":"ltsus","type":{"type":"long","logicalType":"local-timestamp-micros"}},
 {"name":"ltsns","type":{"type":"long","logicalType":"local-timestamp-nanos"}},
 {"name":"odd","type":{"type":"long","logicalType":"x-unknown"}}
]}`

// TestConvertGolden pins the mapping of every row, with placeholder ids
// in pre-order and required-ness, as Iceberg schema JSON.
func TestConvertGolden(t *testing.T) {
	typ, err := avro.Convert(avroSchema(everything))
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.MarshalIndent(columns(typ), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", "convert.golden.json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("Convert changed (go test -update to accept):\n%s", got)
	}
}

func TestConvertNonRecord(t *testing.T) {
	tests := []struct {
		schema string
		want   iceberg.Type
	}{
		{`"string"`, iceberg.PrimitiveTypes.String},
		{`{"type":"long","logicalType":"timestamp-micros"}`, iceberg.PrimitiveTypes.TimestampTz},
		{`{"type":"array","items":"int"}`, &iceberg.ListType{ElementID: 1, Element: iceberg.PrimitiveTypes.Int32, ElementRequired: true}},
		// Map values are optional whatever the Avro values: iceberg-go
		// v0.7.0 cannot scan required map values.
		{`{"type":"map","values":"long"}`, &iceberg.MapType{KeyID: 1, KeyType: iceberg.PrimitiveTypes.String, ValueID: 2, ValueType: iceberg.PrimitiveTypes.Int64, ValueRequired: false}},
		{`{"type":"map","values":["null","long"]}`, &iceberg.MapType{KeyID: 1, KeyType: iceberg.PrimitiveTypes.String, ValueID: 2, ValueType: iceberg.PrimitiveTypes.Int64, ValueRequired: false}},
		// A top-level union is one optional column, value.
		{`["null","string"]`, &iceberg.StructType{FieldList: []iceberg.NestedField{{ID: 1, Name: "value", Type: iceberg.PrimitiveTypes.String}}}},
		{`["int","string"]`, &iceberg.StructType{FieldList: []iceberg.NestedField{{ID: 1, Name: "value", Required: true, Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 2, Name: "tag", Type: iceberg.PrimitiveTypes.Int32, Required: true},
			{ID: 3, Name: "field0", Type: iceberg.PrimitiveTypes.Int32},
			{ID: 4, Name: "field1", Type: iceberg.PrimitiveTypes.String},
		}}}}}},
	}
	for _, tt := range tests {
		got, err := avro.Convert(avroSchema(tt.schema))
		if err != nil {
			t.Fatalf("%s: %v", tt.schema, err)
		}
		if !got.Equals(tt.want) {
			t.Errorf("%s: got %s, want %s", tt.schema, got, tt.want)
		}
	}
}

func TestConvertRefuses(t *testing.T) {
	tests := []struct {
		name, schema, want string
	}{
		{"null alone", record(`"null"`), "field f: type null outside a union with another type: not supported"},
		{"union of null", record(`["null"]`), "field f: a union of null alone: not supported"},
		{"decimal over 38", record(`{"type":"bytes","logicalType":"decimal","precision":39,"scale":0}`),
			"field f: decimal precision 39 above Iceberg's 38: not supported"},
		{"not avro", "", "avro: schema 0 is PROTOBUF, not AVRO"},
		{"bad json", `{"type":`, "avro: schema 0:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := avroSchema(tt.schema)
			if tt.name == "not avro" {
				s.Type = wire.TypeProtobuf
			}
			_, err := avro.Convert(s)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("got %v, want %s", err, tt.want)
			}
			if strings.HasSuffix(tt.want, "not supported") && !errors.Is(err, avro.ErrUnsupported) {
				t.Fatalf("%v does not wrap ErrUnsupported", err)
			}
		})
	}
}

// TestReferences resolves a record type defined in a referenced schema
// (which itself references another), as the registry hands them over.
func TestReferences(t *testing.T) {
	money := wire.Schema{Type: wire.TypeAvro, Text: `{"type":"record","name":"Money","namespace":"com.shop","fields":[{"name":"cents","type":"long"},{"name":"currency","type":"string"}]}`}
	customer := wire.Schema{Type: wire.TypeAvro, Text: `{"type":"record","name":"Customer","namespace":"com.shop","fields":[{"name":"id","type":"long"},{"name":"credit","type":"com.shop.Money"}]}`,
		References: []wire.Reference{{Name: "com.shop.Money", Subject: "money", Version: 1, Schema: money}}}
	order := &wire.Schema{ID: 7, Type: wire.TypeAvro, Text: `{"type":"record","name":"Order","namespace":"com.shop","fields":[{"name":"customer","type":"com.shop.Customer"},{"name":"total","type":"Money"}]}`,
		References: []wire.Reference{{Name: "com.shop.Customer", Subject: "customer", Version: 3, Schema: customer}}}
	writer := `{"type":"record","name":"Order","namespace":"com.shop","fields":[{"name":"customer","type":` + strings.Replace(customer.Text, `"com.shop.Money"`, money.Text, 1) + `},{"name":"total","type":"Money"}]}`
	v := map[string]any{
		"customer": map[string]any{"id": int64(42), "credit": map[string]any{"cents": int64(150), "currency": "EUR"}},
		"total":    map[string]any{"cents": int64(-1), "currency": "USD"},
	}
	got := rows(t, order, nil, encode(t, writer, v))
	want := `{"customer":{"credit":{"cents":150,"currency":"EUR"},"id":42},"total":{"cents":-1,"currency":"USD"}}`
	if len(got) != 1 || got[0] != want {
		t.Fatalf("got %q, want %s", got, want)
	}
	// The same record name in two schemas does not collide: each parse
	// has its own cache.
	other := &wire.Schema{Type: wire.TypeAvro, Text: `{"type":"record","name":"Money","namespace":"com.shop","fields":[{"name":"x","type":"int"}]}`}
	if _, err := avro.Convert(other); err != nil {
		t.Fatal(err)
	}
	if _, err := avro.Convert(order); err != nil {
		t.Fatal(err)
	}
	// A missing reference is an error naming the type.
	if _, err := avro.Convert(&wire.Schema{Type: wire.TypeAvro, Text: order.Text}); err == nil || !strings.Contains(err.Error(), "com.shop.Customer") {
		t.Fatalf("got %v, want an error naming com.shop.Customer", err)
	}
}
