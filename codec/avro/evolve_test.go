package avro_test

import (
	"math/big"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"

	"github.com/minkhq/mink/codec/avro"
)

func opt(id int, name string, t iceberg.Type) iceberg.NestedField {
	return iceberg.NestedField{ID: id, Name: name, Type: t}
}

func req(id int, name string, t iceberg.Type) iceberg.NestedField {
	return iceberg.NestedField{ID: id, Name: name, Type: t, Required: true}
}

func structOf(fields ...iceberg.NestedField) *iceberg.StructType {
	return &iceberg.StructType{FieldList: fields}
}

// TestPromotions decodes an old writer into a wider table type: int→long,
// float→double, decimal(5,2)→decimal(9,2), required→optional, fields in
// another order, and fields the writer lacks (null), at the top and
// nested, inside lists and maps and union branches.
func TestPromotions(t *testing.T) {
	writer := `{"type":"record","name":"V1","fields":[
	 {"name":"id","type":"int"},
	 {"name":"score","type":"float"},
	 {"name":"price","type":{"type":"bytes","logicalType":"decimal","precision":5,"scale":2}},
	 {"name":"name","type":"string"},
	 {"name":"customer","type":{"type":"record","name":"C","fields":[{"name":"id","type":"int"}]}},
	 {"name":"items","type":{"type":"array","items":"int"}},
	 {"name":"attrs","type":{"type":"map","values":"float"}},
	 {"name":"u","type":["int","string"]}
	]}`
	table := structOf(
		opt(1, "extra", iceberg.PrimitiveTypes.String),
		req(2, "id", iceberg.PrimitiveTypes.Int64),
		req(3, "score", iceberg.PrimitiveTypes.Float64),
		req(4, "price", iceberg.DecimalTypeOf(9, 2)),
		opt(5, "name", iceberg.PrimitiveTypes.String),
		req(6, "customer", structOf(
			req(7, "id", iceberg.PrimitiveTypes.Int64),
			opt(8, "details", structOf(opt(9, "name", iceberg.PrimitiveTypes.String))),
		)),
		req(10, "items", &iceberg.ListType{ElementID: 11, Element: iceberg.PrimitiveTypes.Int64}),
		req(12, "attrs", &iceberg.MapType{KeyID: 13, KeyType: iceberg.PrimitiveTypes.String, ValueID: 14, ValueType: iceberg.PrimitiveTypes.Float64}),
		req(15, "u", structOf(
			req(16, "tag", iceberg.PrimitiveTypes.Int32),
			opt(17, "field0", iceberg.PrimitiveTypes.Int64),
			opt(18, "field1", iceberg.PrimitiveTypes.String),
			opt(19, "field2", iceberg.PrimitiveTypes.Bool),
		)),
	)
	v := map[string]any{
		"id": int32(-7), "score": float32(0.1), "price": big.NewRat(-99999, 100), "name": "n",
		"customer": map[string]any{"id": int32(2147483647)},
		"items":    []any{int32(1), int32(-2)},
		"attrs":    map[string]any{"k": float32(1.25)},
		"u":        map[string]any{"int": int32(3)},
	}
	got := rows(t, avroSchema(writer), table, encode(t, writer, v))
	// float32(0.1) widened exactly: 0.10000000149011612.
	want := `{"attrs":[{"key":"k","value":1.25}],"customer":{"details":null,"id":2147483647},"extra":null,"id":-7,"items":[1,-2],"name":"n","price":"-999.99","score":0.10000000149011612,"u":{"field0":3,"field1":null,"field2":null,"tag":0}}`
	if len(got) != 1 || got[0] != want {
		t.Fatalf("got %q\nwant %s", got, want)
	}
}

// TestEvolutionSequence is the sequence at the decoder's level:
// v1 {id, customer{id}}, v2 adds customer.details{name}, v3 widens id to
// long; every version's rows read under the final table type. v4 (a
// string into the int column) is refused by NewDecoder.
func TestEvolutionSequence(t *testing.T) {
	v1 := `{"type":"record","name":"Order","fields":[{"name":"id","type":"int"},
	 {"name":"customer","type":{"type":"record","name":"Customer","fields":[{"name":"id","type":"string"}]}}]}`
	v2 := `{"type":"record","name":"Order","fields":[{"name":"id","type":"int"},
	 {"name":"customer","type":{"type":"record","name":"Customer","fields":[{"name":"id","type":"string"},
	   {"name":"details","type":["null",{"type":"record","name":"Details","fields":[{"name":"name","type":"string"}]}]}]}}]}`
	v3 := strings.Replace(v2, `{"name":"id","type":"int"}`, `{"name":"id","type":"long"}`, 1)
	v4 := strings.Replace(v3, `{"name":"id","type":"string"}`, `{"name":"id","type":"int"}`, 1)
	final, err := avro.Convert(avroSchema(v3))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		schema string
		v      map[string]any
		want   string
	}{
		{v1, map[string]any{"id": int32(1), "customer": map[string]any{"id": "c1"}},
			`{"customer":{"details":null,"id":"c1"},"id":1}`},
		{v2, map[string]any{"id": int32(2), "customer": map[string]any{"id": "c2", "details": map[string]any{"Details": map[string]any{"name": "Ann"}}}},
			`{"customer":{"details":{"name":"Ann"},"id":"c2"},"id":2}`},
		{v3, map[string]any{"id": int64(1) << 40, "customer": map[string]any{"id": "c3", "details": nil}},
			`{"customer":{"details":null,"id":"c3"},"id":1099511627776}`},
	}
	for _, c := range cases {
		got := rows(t, avroSchema(c.schema), final, encode(t, c.schema, c.v))
		if len(got) != 1 || got[0] != c.want {
			t.Errorf("got %q, want %s", got, c.want)
		}
	}
	_, err = avro.NewDecoder(avroSchema(v4), final)
	if want := "field customer.id: writer int, table string"; err == nil || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
}

func TestNewDecoderRefuses(t *testing.T) {
	longT := iceberg.PrimitiveTypes.Int64
	tests := []struct {
		name   string
		writer string
		table  iceberg.Type
		want   string
	}{
		{"string into int", `{"type":"record","name":"R","fields":[{"name":"customer","type":{"type":"record","name":"C","fields":[{"name":"id","type":"string"}]}}]}`,
			structOf(req(1, "customer", structOf(req(2, "id", iceberg.PrimitiveTypes.Int32)))), "field customer.id: writer string, table int"},
		{"long into int", record(`"long"`), structOf(req(1, "f", iceberg.PrimitiveTypes.Int32)), "field f: writer long, table int"},
		{"double into float", record(`"double"`), structOf(req(1, "f", iceberg.PrimitiveTypes.Float32)), "field f: writer double, table float"},
		{"timestamp-millis into long", record(`{"type":"long","logicalType":"timestamp-millis"}`), structOf(req(1, "f", longT)),
			"field f: writer long (timestamp-millis), table long"},
		{"narrower decimal", record(`{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}`), structOf(req(1, "f", iceberg.DecimalTypeOf(8, 2))),
			"field f: writer bytes (decimal), table decimal(8, 2)"},
		{"decimal scale", record(`{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}`), structOf(req(1, "f", iceberg.DecimalTypeOf(10, 3))),
			"field f: writer bytes (decimal), table decimal(10, 3)"},
		{"enum into int", record(`{"type":"enum","name":"E","symbols":["A"]}`), structOf(req(1, "f", iceberg.PrimitiveTypes.Int32)),
			"field f: writer enum (string), table int"},
		{"optional into required", record(`["null","long"]`), structOf(req(1, "f", longT)), "field f: writer optional, table required"},
		{"optional element into required", record(`{"type":"array","items":["null","long"]}`),
			structOf(req(1, "f", &iceberg.ListType{ElementID: 2, Element: longT, ElementRequired: true})), "field f.element: writer optional, table required"},
		{"unknown field", record(`"long"`), structOf(req(1, "g", longT)), "field f: written, but the table has no such field"},
		{"required field not written", record(`"long"`), structOf(req(1, "f", longT), req(2, "g", longT)), "field g: required by the table, not written"},
		{"record into long", record(`{"type":"record","name":"In","fields":[]}`), structOf(req(1, "f", longT)), "field f: writer record In, table long"},
		{"union without tag", record(`["int","string"]`), structOf(req(1, "f", structOf(opt(2, "field0", iceberg.PrimitiveTypes.Int32)))),
			`field f: the table's struct for a union has no int field "tag"`},
		{"union branch not in table", record(`["int","string"]`), structOf(req(1, "f", structOf(req(2, "tag", iceberg.PrimitiveTypes.Int32), opt(3, "field0", iceberg.PrimitiveTypes.Int32)))),
			"field f.field1: written, but the table has no such field"},
		{"record into value column", record(`"long"`), longT, "avro: writer record R, table value column long"},
		{"map of long into map of int", record(`{"type":"map","values":"long"}`),
			structOf(req(1, "f", &iceberg.MapType{KeyID: 2, KeyType: iceberg.PrimitiveTypes.String, ValueID: 3, ValueType: iceberg.PrimitiveTypes.Int32})), "field f.value: writer long, table int"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := avro.NewDecoder(avroSchema(tt.writer), tt.table)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("got %v, want %s", err, tt.want)
			}
		})
	}
}

// TestTopLevel: a value that is not a record is the table's value column.
func TestTopLevel(t *testing.T) {
	tests := []struct {
		schema string
		v      any
		want   string
	}{
		{`"string"`, "plain", `{"value":"plain"}`},
		{`{"type":"long","logicalType":"timestamp-millis"}`, int64(-1), `{"value":"1969-12-31T23:59:59.999Z"}`},
		{`["null","string"]`, nil, `{"value":null}`},
		{`["null","string"]`, "x", `{"value":"x"}`},
		{`["int","string"]`, map[string]any{"string": "x"}, `{"value":{"field0":null,"field1":"x","tag":1}}`},
		{`{"type":"array","items":"int"}`, []int32{4, 5}, `{"value":[4,5]}`},
	}
	// The value column's own type as the target works too.
	u := `["null","string"]`
	if got := rows(t, avroSchema(u), iceberg.PrimitiveTypes.String, encode(t, u, "y"), encode(t, u, nil)); strings.Join(got, " ") != `{"value":"y"} {"value":null}` {
		t.Errorf("%s into string: got %q", u, got)
	}
	for _, tt := range tests {
		p := encode(t, tt.schema, tt.v)
		if tt.v == int64(-1) {
			p = []byte{1} // zig-zag -1
		}
		got := rows(t, avroSchema(tt.schema), nil, p)
		if len(got) != 1 || got[0] != tt.want {
			t.Errorf("%s: got %q, want %s", tt.schema, got, tt.want)
		}
	}
}
