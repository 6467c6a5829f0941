package codec_test

import (
	"encoding/json"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/codec"
	"github.com/minkhq/mink/codec/jsonschema"
	"github.com/minkhq/mink/codec/wire"
)

// jsWriters gives every id the one JSON Schema.
type jsWriters struct{ s *wire.Schema }

func (w jsWriters) WriterSchema(bool, int, []int) (*wire.Schema, error) { return w.s, nil }

// jsonSchemaTable decodes values (JSON texts, framed with schema id 7)
// with the table schema converted from the JSON Schema text. It returns
// the rows decoded, as JSON (the value columns only), and each value's
// error ("" when it decoded).
func jsonSchemaTable(t *testing.T, schema string, values ...string) (rows []map[string]any, errs []string) {
	t.Helper()
	ws := &wire.Schema{ID: 7, Type: wire.TypeJSON, Text: schema}
	typ, err := jsonschema.Convert(ws)
	require.NoError(t, err)
	sc, err := codec.TableSchema(codec.Raw, codec.JSONSchema, iceberg.NewSchema(0, typ.(*iceberg.StructType).FieldList...))
	require.NoError(t, err)
	dec, err := codec.NewDecoderConfig(sc, codec.DecoderConfig{Format: codec.JSONSchema, KeyFormat: codec.Raw, Writers: jsWriters{ws}})
	require.NoError(t, err)
	asc, err := table.SchemaToArrowSchema(sc, nil, true, false)
	require.NoError(t, err)
	rb := array.NewRecordBuilder(memory.DefaultAllocator, asc)
	defer rb.Release()
	for _, v := range values {
		if err := dec.Decode(append(wire.AppendHeader(nil, 7, nil), v...)); err != nil {
			errs = append(errs, err.Error())
			continue
		}
		errs = append(errs, "")
		rb.Field(0).AppendNull()
		dec.Append(rb.Fields()[1:])
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()
	for i := range int(rec.NumRows()) {
		row := map[string]any{}
		for c := 1; c < int(rec.NumCols()); c++ {
			b, err := json.Marshal(rec.Column(c).GetOneForMarshal(i))
			require.NoError(t, err)
			var v any
			require.NoError(t, json.Unmarshal(b, &v))
			row[rec.ColumnName(c)] = v
		}
		rows = append(rows, row)
	}
	return rows, errs
}

// TestJSONSchemaOneOfObjects: a oneOf of objects is a struct with one
// field per branch; each value fills the branch it validates against
// (JSON Schema's oneOf: exactly one), not the first one it would parse
// as; a value that validates against none or two is a dead letter naming
// them.
func TestJSONSchemaOneOfObjects(t *testing.T) {
	t.Parallel()
	rows, errs := jsonSchemaTable(t, `{"type": "object", "required": ["id", "vehicle"], "properties": {
		"id": {"type": "integer"},
		"vehicle": {"oneOf": [
			{"title": "car", "type": "object", "properties": {"doors": {"type": "integer"}, "color": {"type": "string"}}, "required": ["doors"], "additionalProperties": false},
			{"$ref": "#/definitions/bike"},
			{"type": "object", "properties": {"wings": {"type": "integer"}, "color": {"type": "string"}}, "required": ["wings"]}]}},
		"definitions": {"bike": {"type": "object", "properties": {"gears": {"type": "integer"}, "color": {"type": "string"}}, "required": ["gears"], "additionalProperties": false}}}`,
		`{"id": 1, "vehicle": {"doors": 4, "color": "red"}}`,
		`{"id": 2, "vehicle": {"color": "blue", "gears": 21}}`,
		// Parses as a car (doors, color) but is only a plane: car and
		// bike forbid the key wings.
		`{"id": 3, "vehicle": {"doors": 2, "wings": 2, "color": "white"}}`,
		`{"id": 4, "vehicle": {"color": "green"}}`,
		`{"id": 5, "vehicle": {"doors": 4}, "x": 1}`,
		`{"id": 6, "vehicle": {"gears": 3, "wings": 2}}`,
	)
	require.Equal(t, []string{"", "", "",
		`value (schema id 7): field vehicle: object validates against none of the oneOf's branches (car, bike, option_2)`,
		"", "",
	}, errs)
	require.Equal(t, []map[string]any{
		{"id": 1.0, "vehicle": map[string]any{"car": map[string]any{"doors": 4.0, "color": "red"}, "bike": nil, "option_2": nil}},
		{"id": 2.0, "vehicle": map[string]any{"car": nil, "bike": map[string]any{"gears": 21.0, "color": "blue"}, "option_2": nil}},
		{"id": 3.0, "vehicle": map[string]any{"car": nil, "bike": nil, "option_2": map[string]any{"wings": 2.0, "color": "white"}}},
		{"id": 5.0, "vehicle": map[string]any{"car": map[string]any{"doors": 4.0, "color": nil}, "bike": nil, "option_2": nil}},
		// option_2 allows other keys: gears is an unknown field, counted.
		{"id": 6.0, "vehicle": map[string]any{"car": nil, "bike": nil, "option_2": map[string]any{"wings": 2.0, "color": nil}}},
	}, rows)
}

// TestJSONSchemaUnionsOfScalars: a value two branches of a oneOf accept is
// a dead letter; of an anyOf, it fills both. Unions of scalars too.
func TestJSONSchemaUnionsOfScalars(t *testing.T) {
	t.Parallel()
	rows, errs := jsonSchemaTable(t, `{"type": "object", "properties": {
		"one": {"oneOf": [{"type": "integer"}, {"type": "number"}, {"type": "null"}]},
		"any": {"anyOf": [{"title": "int", "type": "integer"}, {"title": "num", "type": "number"}, {"title": "text", "type": "string", "maxLength": 3}]}}}`,
		`{"one": 1.5, "any": 7}`,
		`{"one": null, "any": "abc"}`,
		`{"one": 2}`,
		`{"any": "abcd"}`,
		`{"any": 9007199254740993}`,
	)
	require.Equal(t, []string{"", "",
		`value (schema id 7): field one: number 2 validates against 2 of the oneOf's branches (option_0, option_1), not exactly one`,
		`value (schema id 7): field any: string "abcd" validates against none of the anyOf's branches (int, num, text)`,
		`value (schema id 7): field any.num: cannot convert number 9007199254740993 to double: integer is not exactly representable`,
	}, errs)
	require.Equal(t, []map[string]any{
		{"one": map[string]any{"option_0": nil, "option_1": 1.5}, "any": map[string]any{"int": 7.0, "num": 7.0, "text": nil}},
		{"one": nil, "any": map[string]any{"int": nil, "num": nil, "text": "abc"}},
	}, rows)
}

// TestJSONSchemaWriterRejects: a value its writer schema rejects is a dead
// letter naming where: a property additionalProperties: false forbids (at
// any depth), one unevaluatedProperties: false forbids, one a
// patternProperties schema rejects, a broken const, enum or minimum.
func TestJSONSchemaWriterRejects(t *testing.T) {
	t.Parallel()
	rows, errs := jsonSchemaTable(t, `{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
		"properties": {
			"id": {"type": "integer", "minimum": 1},
			"v": {"const": "v1"},
			"color": {"enum": ["red", "green"]},
			"customer": {"type": "object", "properties": {"name": {"type": "string"}}, "additionalProperties": false},
			"tags": {"type": "object", "properties": {"a": {"type": "string"}}, "patternProperties": {"^x_": {"type": "integer"}}, "additionalProperties": false},
			"meta": {"type": "object", "properties": {"k": {"type": "string"}}, "unevaluatedProperties": false}},
		"additionalProperties": false}`,
		`{"id": 1, "v": "v1", "color": "red", "customer": {"name": "Ada"}, "tags": {"a": "x", "x_n": 2}, "meta": {"k": "q"}}`,
		`{"id": 1, "zip": "12345"}`,
		`{"id": 1, "customer": {"name": "Ada", "zip": "12345"}}`,
		`{"id": 1, "tags": {"a": "x", "y": 1}}`,
		`{"id": 1, "tags": {"a": "x", "x_n": "two"}}`,
		`{"id": 1, "meta": {"k": "q", "extra": true}}`,
		`{"id": 1, "v": "v2"}`,
		`{"id": 1, "color": "blue"}`,
		`{"id": 0}`,
	)
	require.Equal(t, []string{"",
		`value (schema id 7): the writer schema rejects it: at /: additional properties 'zip' not allowed`,
		`value (schema id 7): the writer schema rejects it: at /customer: additional properties 'zip' not allowed`,
		`value (schema id 7): the writer schema rejects it: at /tags: additional properties 'y' not allowed`,
		`value (schema id 7): the writer schema rejects it: at /tags/x_n: got string, want integer`,
		`value (schema id 7): the writer schema rejects it: at /meta/extra: false schema`,
		`value (schema id 7): the writer schema rejects it: at /v: value must be 'v1'`,
		`value (schema id 7): the writer schema rejects it: at /color: value must be one of 'red', 'green'`,
		`value (schema id 7): the writer schema rejects it: at /id: minimum: got 0, want 1`,
	}, errs)
	require.Equal(t, []map[string]any{
		{"id": 1.0, "v": "v1", "color": "red", "customer": map[string]any{"name": "Ada"}, "tags": map[string]any{"a": "x"}, "meta": map[string]any{"k": "q"}},
	}, rows)
}

// TestJSONSchemaUnionMixed: a oneOf of an object, a string and an array
// keeps each value in its own branch's field; inside a list too.
func TestJSONSchemaUnionMixed(t *testing.T) {
	t.Parallel()
	rows, errs := jsonSchemaTable(t, `{"type": "object", "properties": {"v": {"type": "array", "items": {"oneOf": [
		{"title": "obj", "type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]},
		{"title": "text", "type": "string"},
		{"title": "nums", "type": "array", "items": {"type": "number"}}]}}}}`,
		`{"v": [{"x": 1}, "abc", [1.5, 2]]}`,
		`{"v": [true]}`,
	)
	require.Equal(t, []string{"",
		`value (schema id 7): field v[0]: boolean true validates against none of the oneOf's branches (obj, text, nums)`}, errs)
	require.Equal(t, []map[string]any{{"v": []any{
		map[string]any{"obj": map[string]any{"x": 1.0}, "text": nil, "nums": nil},
		map[string]any{"obj": nil, "text": "abc", "nums": nil},
		map[string]any{"obj": nil, "text": nil, "nums": []any{1.5, 2.0}},
	}}}, rows)
}
