package avro_test

import (
	"math/big"
	"testing"
	"time"
)

// TestMapping covers every row of docs/formats.md ("Avro"): each value is
// written by hamba/avro's encoder into a record of one field f, decoded
// into the type Convert maps it to, built into Arrow through
// table.SchemaToArrowSchema and read back.
func TestMapping(t *testing.T) {
	ts := time.Date(2024, 3, 9, 12, 34, 56, 789_000_000, time.UTC)
	tests := []struct {
		name string
		typ  string // Avro JSON of field f
		v    any
		want string // the row, as array.RecordToJSON writes it (struct keys sorted)
	}{
		{"boolean", `"boolean"`, true, `{"f":true}`},
		{"int", `"int"`, int32(-2147483648), `{"f":-2147483648}`},
		{"long", `"long"`, int64(9007199254740993), `{"f":9007199254740993}`},
		{"float", `"float"`, float32(1.5), `{"f":1.5}`},
		{"double", `"double"`, 0.1, `{"f":0.1}`},
		{"string", `"string"`, "héllo", `{"f":"héllo"}`},
		{"bytes", `"bytes"`, []byte{0, 1, 0xff}, `{"f":"AAH/"}`},
		{"enum", `{"type":"enum","name":"E","symbols":["A","B","C"]}`, "C", `{"f":"C"}`},
		{"fixed", `{"type":"fixed","name":"F","size":3}`, [3]byte{1, 2, 3}, `{"f":"AQID"}`},
		{"record", `{"type":"record","name":"In","fields":[{"name":"a","type":"int"},{"name":"b","type":"string"}]}`,
			map[string]any{"a": 1, "b": "x"}, `{"f":{"a":1,"b":"x"}}`},
		{"optional null", `["null","string"]`, nil, `{"f":null}`},
		{"optional value", `["null","string"]`, "x", `{"f":"x"}`},
		{"optional null second", `["string","null"]`, "x", `{"f":"x"}`},
		{"single-branch union", `["long"]`, int64(7), `{"f":7}`},
		{"complex union branch 0", `["int","string"]`, map[string]any{"int": 5}, `{"f":{"field0":5,"field1":null,"tag":0}}`},
		{"complex union branch 1", `["int","string"]`, map[string]any{"string": "s"}, `{"f":{"field0":null,"field1":"s","tag":1}}`},
		{"complex union with null, null", `["null","int","string"]`, nil, `{"f":null}`},
		{"complex union with null, value", `["null","int","string"]`, map[string]any{"string": "s"}, `{"f":{"field0":null,"field1":"s","tag":1}}`},
		{"map", `{"type":"map","values":"long"}`, map[string]any{"k": int64(1)}, `{"f":[{"key":"k","value":1}]}`},
		{"map of optional", `{"type":"map","values":["null","long"]}`, map[string]any{"k": nil}, `{"f":[{"key":"k","value":null}]}`},
		{"array", `{"type":"array","items":"int"}`, []any{1, 2, 3}, `{"f":[1,2,3]}`},
		{"array of optional", `{"type":"array","items":["null","int"]}`, []any{1, nil}, `{"f":[1,null]}`},
		{"empty array", `{"type":"array","items":"int"}`, []any{}, `{"f":[]}`},
		{"decimal bytes", `{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}`, big.NewRat(-12345, 100), `{"f":"-123.45"}`},
		{"decimal fixed", `{"type":"fixed","name":"D","size":8,"logicalType":"decimal","precision":18,"scale":3}`, big.NewRat(1234567, 1000), `{"f":"1234.567"}`},
		{"uuid", `{"type":"string","logicalType":"uuid"}`, "0189DBF1-3C2D-7C8E-8A4B-2F1E0D9C8B7A", `{"f":"0189dbf1-3c2d-7c8e-8a4b-2f1e0d9c8b7a"}`},
		{"uuid fixed", `{"type":"fixed","name":"U","size":16,"logicalType":"uuid"}`,
			[16]byte{0x01, 0x89, 0xdb, 0xf1, 0x3c, 0x2d, 0x7c, 0x8e, 0x8a, 0x4b, 0x2f, 0x1e, 0x0d, 0x9c, 0x8b, 0x7a}, `{"f":"0189dbf1-3c2d-7c8e-8a4b-2f1e0d9c8b7a"}`},
		{"date", `{"type":"int","logicalType":"date"}`, time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC), `{"f":"1969-12-31"}`},
		{"time-millis", `{"type":"int","logicalType":"time-millis"}`, 23*time.Hour + 59*time.Minute + 59*time.Second + 999*time.Millisecond, `{"f":"23:59:59.999"}`},
		{"time-micros", `{"type":"long","logicalType":"time-micros"}`, time.Second + time.Microsecond, `{"f":"00:00:01.000001"}`},
		{"timestamp-millis", `{"type":"long","logicalType":"timestamp-millis"}`, ts, `{"f":"2024-03-09T12:34:56.789Z"}`},
		{"timestamp-micros", `{"type":"long","logicalType":"timestamp-micros"}`, ts.Add(1 * time.Microsecond), `{"f":"2024-03-09T12:34:56.789001Z"}`},
		{"local-timestamp-millis", `{"type":"long","logicalType":"local-timestamp-millis"}`, ts, `{"f":"2024-03-09T12:34:56.789"}`},
		{"local-timestamp-micros", `{"type":"long","logicalType":"local-timestamp-micros"}`, ts.Add(1 * time.Microsecond), `{"f":"2024-03-09T12:34:56.789001"}`},
		{"timestamp-nanos", `{"type":"long","logicalType":"timestamp-nanos"}`, ts.UnixNano() + 2000, `{"f":"2024-03-09T12:34:56.789002Z"}`},
		{"local-timestamp-nanos", `{"type":"long","logicalType":"local-timestamp-nanos"}`, ts.UnixNano() + 2000, `{"f":"2024-03-09T12:34:56.789002"}`},
		{"unknown logical type", `{"type":"long","logicalType":"x-epoch-weeks"}`, int64(5), `{"f":5}`},
		{"invalid logical type", `{"type":"long","logicalType":"date"}`, int64(5), `{"f":5}`},
		{"invalid decimal", `{"type":"bytes","logicalType":"decimal","precision":2,"scale":3}`, []byte{7}, `{"f":"Bw=="}`},
		{"duration stays fixed", `{"type":"fixed","name":"Dur","size":12,"logicalType":"duration"}`, [12]byte{1}, `{"f":"AQAAAAAAAAAAAAAA"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			schema := record(tt.typ)
			p := encode(t, schema, map[string]any{"f": tt.v})
			got := rows(t, avroSchema(schema), nil, p)
			if len(got) != 1 || got[0] != tt.want {
				t.Fatalf("got %q, want %s", got, tt.want)
			}
		})
	}
}
