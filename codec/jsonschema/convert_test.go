package jsonschema_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/codec/jsonschema"
	"github.com/minkhq/mink/codec/wire"
)

// show renders t with field ids and required-ness (which iceberg's String
// leaves out for list elements and map values): "1 id: required long",
// "list<2: double>", "map<3: string, 4: required long>".
func show(t iceberg.Type) string {
	switch t := t.(type) {
	case *iceberg.StructType:
		parts := make([]string, len(t.FieldList))
		for i, f := range t.FieldList {
			parts[i] = fmt.Sprintf("%d %s: %s%s", f.ID, f.Name, req(f.Required), show(f.Type))
		}
		return "struct<" + strings.Join(parts, ", ") + ">"
	case *iceberg.ListType:
		return fmt.Sprintf("list<%d: %s%s>", t.ElementID, req(t.ElementRequired), show(t.Element))
	case *iceberg.MapType:
		return fmt.Sprintf("map<%d: %s, %d: %s%s>", t.KeyID, show(t.KeyType), t.ValueID, req(t.ValueRequired), show(t.ValueType))
	default:
		return t.String()
	}
}

func req(r bool) string {
	if r {
		return "required "
	}
	return ""
}

func js(text string, refs ...wire.Reference) *wire.Schema {
	return &wire.Schema{ID: 7, Type: wire.TypeJSON, Text: text, References: refs}
}

func ref(name, text string, refs ...wire.Reference) wire.Reference {
	return wire.Reference{Name: name, Subject: name, Version: 1, Schema: wire.Schema{Type: wire.TypeJSON, Text: text, References: refs}}
}

// obj wraps properties in a top-level object schema.
func obj(props string) string {
	return `{"type": "object", "properties": {` + props + `}}`
}

func TestConvert(t *testing.T) {
	tests := []struct {
		name   string
		schema *wire.Schema
		want   string
	}{
		{"object keeps the document's order; required iff listed", js(`{
			"$schema": "http://json-schema.org/draft-07/schema#",
			"type": "object",
			"properties": {
				"zeta": {"type": "integer"},
				"alpha": {"type": "string"},
				"mid": {"type": "boolean"}
			},
			"required": ["zeta", "mid", "not-a-property"]}`),
			"struct<1 zeta: required long, 2 alpha: string, 3 mid: required boolean>"},
		{"required but null allowed is optional", js(`{"type": "object",
			"properties": {"a": {"type": ["string", "null"]}, "b": {"anyOf": [{"type": "null"}, {"type": "integer"}]}},
			"required": ["a", "b"]}`),
			"struct<1 a: string, 2 b: long>"},
		{"nested object", js(obj(`"id": {"type": "integer"}, "customer": {"type": "object", "properties": {"id": {"type": "string"}, "details": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}, "required": ["id"]}`)),
			"struct<1 id: long, 2 customer: struct<3 id: required string, 4 details: struct<5 name: required string>>>"},
		{"no type but properties is an object", js(`{"properties": {"a": {"properties": {"b": {"type": "number"}}}}}`),
			"struct<1 a: struct<2 b: double>>"},
		{"scalars", js(obj(`"i": {"type": "integer"}, "n": {"type": "number"}, "b": {"type": "boolean"}, "s": {"type": "string"}`)),
			"struct<1 i: long, 2 n: double, 3 b: boolean, 4 s: string>"},
		{"string formats", js(obj(`
			"ts": {"type": "string", "format": "date-time"},
			"d": {"type": "string", "format": "date"},
			"t": {"type": "string", "format": "time"},
			"u": {"type": "string", "format": "uuid"},
			"e": {"type": "string", "format": "email"},
			"bin": {"type": "string", "contentEncoding": "base64"},
			"hex": {"type": "string", "contentEncoding": "base16"}`)),
			"struct<1 ts: timestamptz, 2 d: date, 3 t: time, 4 u: uuid, 5 e: string, 6 bin: binary, 7 hex: string>"},
		{"array", js(obj(`"tags": {"type": "array", "items": {"type": "string"}}, "opt": {"type": "array", "items": {"type": ["number", "null"]}}, "nested": {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}}`)),
			"struct<1 tags: list<2: required string>, 3 opt: list<4: double>, 5 nested: list<6: required list<7: required long>>>"},
		{"array of objects", js(obj(`"items": {"type": "array", "items": {"type": "object", "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}}, "required": ["sku"]}}`)),
			"struct<1 items: list<2: required struct<3 sku: required string, 4 qty: long>>>"},
		{"null unions", js(`{"type": "object", "required": ["a", "b", "c", "d"], "properties": {
			"a": {"type": ["null", "string"]},
			"b": {"anyOf": [{"type": "null"}, {"type": "object", "properties": {"x": {"type": "integer"}}}]},
			"c": {"oneOf": [{"type": "integer"}, {"type": "null"}]},
			"d": {"oneOf": [{"type": "integer"}]},
			"e": {"anyOf": [{"const": null}, {"type": "boolean"}]},
			"f": {"oneOf": [{"type": "string", "format": "date"}, {"enum": [null]}]}}}`),
			"struct<1 a: string, 2 b: struct<3 x: long>, 4 c: long, 5 d: required long, 6 e: boolean, 7 f: date>"},
		{"oneOf of objects: a struct of its branches, named by title, $ref, else option_<n>", js(`{"type": "object", "required": ["vehicle"], "properties": {
			"vehicle": {"oneOf": [
				{"title": "car", "type": "object", "properties": {"doors": {"type": "integer"}}, "required": ["doors"], "additionalProperties": false},
				{"$ref": "#/definitions/bike"},
				{"type": "object", "properties": {"wings": {"type": "integer"}}, "required": ["wings"]}]}},
			"definitions": {"bike": {"type": "object", "properties": {"gears": {"type": "integer"}}, "required": ["gears"]}}}`),
			"struct<1 vehicle: required struct<2 car: struct<3 doors: required long>, 4 bike: struct<5 gears: required long>, 6 option_2: struct<7 wings: required long>>>"},
		{"anyOf of scalars and null; duplicate titles", js(obj(`"a": {"anyOf": [{"type": "null"}, {"title": "n", "type": "string"}, {"title": "n", "type": "integer"}]},
			"b": {"type": "array", "items": {"oneOf": [{"type": "string", "format": "date"}, {"type": "boolean"}]}}`)),
			"struct<1 a: struct<2 n: string, 3 option_2: long>, 4 b: list<5: required struct<6 option_0: date, 7 option_1: boolean>>>"},
		{"a union at the top level", js(`{"oneOf": [{"title": "x", "type": "object", "properties": {"x": {"type": "integer"}}}, {"title": "y", "type": "object", "properties": {"y": {"type": "string"}}}]}`),
			"struct<1 x: struct<2 x: long>, 3 y: struct<4 y: string>>"},
		{"enum and const", js(`{"type": "object", "required": ["s", "c", "i", "n", "b", "sn", "typed"], "properties": {
			"s": {"enum": ["red", "green"]},
			"c": {"const": "v1"},
			"i": {"enum": [1, 2, 3]},
			"n": {"enum": [1, 2.5]},
			"b": {"const": true},
			"sn": {"enum": ["a", null]},
			"typed": {"type": "string", "enum": ["x", "y"]}}}`),
			"struct<1 s: required string, 2 c: required string, 3 i: required long, 4 n: required double, 5 b: required boolean, 6 sn: string, 7 typed: required string>"},
		{"map from additionalProperties", js(obj(`
			"counts": {"type": "object", "additionalProperties": {"type": "integer"}},
			"labels": {"type": "object", "properties": {}, "additionalProperties": {"type": ["string", "null"]}},
			"deep": {"type": "object", "additionalProperties": {"type": "object", "properties": {"v": {"type": "number"}}}}`)),
			"struct<1 counts: map<2: string, 3: long>, 4 labels: map<5: string, 6: string>, 7 deep: map<8: string, 9: struct<10 v: double>>>"},
		{"properties and additionalProperties is a struct", js(obj(`"o": {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": {"type": "integer"}, "patternProperties": {"^x": {"type": "string"}}}`)),
			"struct<1 o: struct<2 a: string>>"},
		{"allOf with one schema", js(obj(`"a": {"allOf": [{"type": "integer"}]}`)),
			"struct<1 a: long>"},
		{"$ref to definitions (draft-07)", js(`{"type": "object",
			"properties": {"billing": {"$ref": "#/definitions/address"}, "shipping": {"$ref": "#/definitions/address", "description": "where to"}},
			"required": ["billing"],
			"definitions": {"address": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}`),
			"struct<1 billing: required struct<2 city: required string>, 3 shipping: struct<4 city: required string>>"},
		{"$ref to $defs (2020-12), escaped pointer", js(`{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
			"properties": {"a": {"$ref": "#/$defs/a~1b"}, "b": {"$ref": "#/$defs/c%20d"}, "c": {"$ref": "#/$defs/list/items"}},
			"$defs": {"a/b": {"type": "integer"}, "c d": {"type": "boolean"}, "list": {"type": "array", "items": {"type": "number"}}}}`),
			"struct<1 a: long, 2 b: boolean, 3 c: double>"},
		{"$ref to an anchor", js(`{"type": "object",
			"properties": {"a": {"$ref": "#money"}, "b": {"$ref": "#old"}},
			"$defs": {"m": {"$anchor": "money", "type": "number"}, "o": {"$id": "#old", "type": "string"}}}`),
			"struct<1 a: double, 2 b: string>"},
		{"the same definition twice in a row is not recursion", js(`{"type": "object",
			"properties": {"p": {"$ref": "#/definitions/pair"}},
			"definitions": {"pair": {"type": "object", "properties": {"x": {"$ref": "#/definitions/n"}, "y": {"$ref": "#/definitions/n"}}}, "n": {"type": "integer"}}}`),
			"struct<1 p: struct<2 x: long, 3 y: long>>"},
		{"$ref to schema references", js(`{"type": "object", "properties": {
				"customer": {"$ref": "customer.json"},
				"addr": {"$ref": "common.json#/definitions/address"}}}`,
			ref("customer.json", `{"type": "object", "properties": {"id": {"type": "integer"}, "home": {"$ref": "common.json#/definitions/address"}}, "required": ["id"]}`,
				ref("common.json", `{"definitions": {"address": {"type": "object", "properties": {"zip": {"$ref": "#/definitions/zip"}}}, "zip": {"type": "string"}}}`)),
		),
			"struct<1 customer: struct<2 id: required long, 3 home: struct<4 zip: string>>, 5 addr: struct<6 zip: string>>"},
		{"$ref relative to a draft-04 id", js(`{"$schema": "http://json-schema.org/draft-04/schema#", "id": "https://example.com/a/order.json", "type": "object", "properties": {"c": {"$ref": "../b/customer.json#/definitions/c"}}}`,
			ref("https://example.com/b/customer.json", `{"definitions": {"c": {"type": "string"}}}`)),
			"struct<1 c: string>"},
		{"$ref relative to $id", js(`{"$id": "https://example.com/schemas/order.json", "type": "object", "properties": {"c": {"$ref": "customer.json"}}}`,
			ref("https://example.com/schemas/customer.json", `{"type": "object", "properties": {"id": {"type": "integer"}}}`)),
			"struct<1 c: struct<2 id: long>>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := jsonschema.Convert(tt.schema)
			require.NoError(t, err)
			require.Equal(t, tt.want, show(got))
		})
	}
}

func TestConvertDocs(t *testing.T) {
	got, err := jsonschema.Convert(js(`{"type": "object", "properties": {
		"a": {"type": "integer", "description": "the answer"},
		"b": {"$ref": "#/definitions/b", "description": "outer"},
		"c": {"type": "string"}},
		"definitions": {"b": {"type": "string", "description": "inner"}}}`))
	require.NoError(t, err)
	fields := got.(*iceberg.StructType).FieldList
	require.Equal(t, []string{"the answer", "outer", ""}, []string{fields[0].Doc, fields[1].Doc, fields[2].Doc})
}

func TestConvertRefuses(t *testing.T) {
	const anyHint = "declare the field, or use value format json with a schema file"
	tests := []struct {
		name   string
		schema *wire.Schema
		want   string // the whole error text
	}{
		{"{} schema", js(obj(`"a": {}`)),
			"field a: unsupported JSON Schema: the schema {} accepts any JSON value, which has no Iceberg type (" + anyHint + ")"},
		{"true schema", js(obj(`"a": {"type": "object", "properties": {"b": true}}`)),
			"field a.b: unsupported JSON Schema: the schema true accepts any JSON value, which has no Iceberg type (" + anyHint + ")"},
		{"false schema", js(obj(`"a": false`)),
			"field a: unsupported JSON Schema: the schema false accepts no value"},
		{"only annotations", js(obj(`"a": {"description": "anything"}`)),
			"field a: unsupported JSON Schema: the schema {} accepts any JSON value, which has no Iceberg type (" + anyHint + ")"},
		{"object without properties", js(obj(`"a": {"type": "object"}`)),
			"field a: unsupported JSON Schema: object without properties: it has no fields; " + anyHint},
		{"object with additionalProperties false only", js(obj(`"a": {"type": "object", "additionalProperties": false}`)),
			"field a: unsupported JSON Schema: object without properties: it has no fields; " + anyHint},
		{"additionalProperties true", js(obj(`"a": {"type": "object", "additionalProperties": true}`)),
			"field a.value: unsupported JSON Schema: the schema true accepts any JSON value, which has no Iceberg type (" + anyHint + ")"},
		{"array without items", js(obj(`"a": {"type": "array"}`)),
			"field a: unsupported JSON Schema: array without items: its elements could be anything; " + anyHint},
		{"array of anything", js(obj(`"a": {"type": "array", "items": {}}`)),
			"field a.element: unsupported JSON Schema: the schema {} accepts any JSON value, which has no Iceberg type (" + anyHint + ")"},
		{"prefixItems", js(obj(`"a": {"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}]}`)),
			"field a: unsupported JSON Schema: prefixItems: a tuple has no Iceberg type (use items for a list)"},
		{"draft-07 tuple", js(obj(`"a": {"type": "array", "items": [{"type": "number"}, {"type": "string"}]}`)),
			"field a: unsupported JSON Schema: items is an array: a tuple has no Iceberg type (use one schema for items)"},
		{"type union", js(obj(`"a": {"type": ["string", "integer", "null"]}`)),
			`field a: unsupported JSON Schema: type ["string" "integer"]: a union of types has no Iceberg type; ` + anyHint},
		{"oneOf of nulls", js(obj(`"a": {"oneOf": [{"type": "null"}]}`)),
			"field a: unsupported JSON Schema: oneOf with no schema other than null: no Iceberg type holds only null"},
		{"a title that takes a later branch's name", js(obj(`"a": {"oneOf": [{"title": "option_1", "type": "string"}, {"type": "integer"}]}`)),
			"field a: unsupported JSON Schema: two branches are named option_1: give them titles"},
		{"a union's branch refused", js(obj(`"a": {"anyOf": [{"type": "string"}, {"title": "any"}]}`)),
			"field a.any: unsupported JSON Schema: the schema {} accepts any JSON value, which has no Iceberg type (" + anyHint + ")"},
		{"allOf of two", js(obj(`"a": {"allOf": [{"type": "object", "properties": {"x": {"type": "string"}}}, {"type": "object", "properties": {"y": {"type": "string"}}}]}`)),
			"field a: unsupported JSON Schema: allOf with 2 schemas: merging schemas is not supported; " + anyHint},
		{"anyOf next to type", js(obj(`"a": {"type": "object", "properties": {"x": {"type": "string"}}, "anyOf": [{"required": ["x"]}]}`)),
			"field a: unsupported JSON Schema: type next to anyOf: merging two schemas is not supported"},
		{"$ref next to type", js(`{"type": "object", "properties": {"a": {"$ref": "#/definitions/a", "type": ["object", "null"]}}, "definitions": {"a": {"type": "object", "properties": {"x": {"type": "string"}}}}}`),
			"field a: unsupported JSON Schema: type next to $ref: merging two schemas is not supported"},
		{"type null alone", js(obj(`"a": {"type": "null"}`)),
			"field a: unsupported JSON Schema: type null alone: no Iceberg type holds only null"},
		{"enum of null alone", js(obj(`"a": {"enum": [null]}`)),
			"field a: unsupported JSON Schema: enum of null alone: no Iceberg type holds only null"},
		{"const null alone", js(obj(`"a": {"const": null}`)),
			"field a: unsupported JSON Schema: enum of null alone: no Iceberg type holds only null"},
		{"enum of objects", js(obj(`"a": {"enum": [{"x": 1}]}`)),
			"field a: unsupported JSON Schema: enum value of type object: only strings, numbers and booleans"},
		{"enum of mixed kinds", js(obj(`"a": {"enum": ["x", 1]}`)),
			"field a: unsupported JSON Schema: enum mixes strings, numbers and booleans: add a type; " + anyHint},
		{"enum of an inexact integer", js(obj(`"a": {"enum": [1.5, 9007199254740993]}`)),
			"field a: unsupported JSON Schema: enum value 9007199254740993 is not exact as a double"},
		{"unknown type", js(obj(`"a": {"type": "decimal"}`)),
			`field a: unknown type "decimal"`},
		{"recursive $ref", js(`{"type": "object", "properties": {"root": {"$ref": "#/definitions/node"}},
			"definitions": {"node": {"type": "object", "properties": {"value": {"type": "integer"}, "children": {"type": "array", "items": {"$ref": "#/definitions/node"}}}}}}`),
			`field root.children.element: unsupported JSON Schema: $ref "#/definitions/node" is recursive: an Iceberg type cannot nest without end`},
		{"recursive through references", js(`{"type": "object", "properties": {"a": {"$ref": "a.json"}}}`,
			ref("a.json", `{"type": "object", "properties": {"b": {"$ref": "b.json"}}}`),
			ref("b.json", `{"type": "object", "properties": {"a": {"$ref": "a.json"}}}`)),
			`field a.b.a: unsupported JSON Schema: $ref "a.json" is recursive: an Iceberg type cannot nest without end`},
		{"recursive under two spellings", js(`{"type": "object", "properties": {"a": {"$ref": "#/definitions/a"}},
			"definitions": {"a": {"$anchor": "A", "type": "object", "properties": {"next": {"$ref": "#A"}}}}}`),
			`field a.next: unsupported JSON Schema: $ref "#A" is recursive: an Iceberg type cannot nest without end`},
		{"a $ref chain that loops", js(`{"type": "object", "properties": {"a": {"$ref": "#/definitions/x"}},
			"definitions": {"x": {"$ref": "#/definitions/y"}, "y": {"$ref": "#/definitions/x"}}}`),
			`field a: unsupported JSON Schema: $ref "#/definitions/x" is recursive: an Iceberg type cannot nest without end`},
		{"$dynamicRef", js(obj(`"a": {"$dynamicRef": "#node"}`)),
			"field a: unsupported JSON Schema: $dynamicRef"},
		{"unresolved pointer", js(obj(`"a": {"$ref": "#/definitions/missing"}`)),
			`field a: $ref "#/definitions/missing": no "#/definitions/missing" in the document`},
		{"unresolved reference", js(obj(`"a": {"$ref": "other.json"}`)),
			`field a: $ref "other.json": no such schema reference (the registry schema's references name none)`},
		{"unresolved anchor", js(obj(`"a": {"$ref": "#nowhere"}`)),
			`field a: $ref "#nowhere": no anchor "nowhere"`},
		{"top level not an object", js(`{"type": "string"}`),
			"top level: unsupported JSON Schema: the value is a string; a table's value must be an object with properties"},
		{"top level map", js(`{"type": "object", "additionalProperties": {"type": "string"}}`),
			"top level: unsupported JSON Schema: the value is a map<string, string>; a table's value must be an object with properties"},
		{"top level {}", js(`{}`),
			"top level: unsupported JSON Schema: the schema {} accepts any JSON value, which has no Iceberg type (" + anyHint + ")"},
		{"invalid JSON", js(`{"type": "object",`),
			"schema 7: invalid JSON: unexpected EOF"},
		{"data after the document", js(`{"type": "object"} {}`),
			"schema 7: invalid JSON: data after the document"},
		{"duplicate key", js(`{"type": "object", "properties": {"a": {"type": "string"}, "a": {"type": "integer"}}}`),
			`schema 7: invalid JSON: key "a" appears twice in one object`},
		{"invalid reference", js(obj(`"a": {"$ref": "x.json"}`), ref("x.json", `{`)),
			`reference "x.json" (subject x.json version 1): invalid JSON: unexpected EOF`},
		{"not a JSON schema", &wire.Schema{ID: 3, Type: wire.TypeAvro, Text: `{"type": "record"}`},
			"schema 3 has type AVRO, not JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := jsonschema.Convert(tt.schema)
			require.EqualError(t, err, tt.want)
		})
	}
}
