package codec_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/codec"
)

var update = flag.Bool("update", false, "rewrite golden files")

// declaredJSON is a declared schema exercising nesting; its own ids are
// deliberately unrelated to the ids Mink assigns.
const declaredJSON = `{"type":"struct","schema-id":7,"fields":[
 {"id":100,"name":"type","required":false,"type":"string","doc":"GeoJSON object type"},
 {"id":101,"name":"properties","required":true,"type":{"type":"struct","fields":[
   {"id":102,"name":"mag","required":false,"type":"double"},
   {"id":103,"name":"time","required":true,"type":"timestamptz"}]}},
 {"id":104,"name":"geometry","required":false,"type":{"type":"struct","fields":[
   {"id":105,"name":"coordinates","required":false,"type":{"type":"list","element-id":106,"element":"double","element-required":true}}]}},
 {"id":107,"name":"tags","required":false,"type":{"type":"map","key-id":108,"key":"string","value-id":109,"value":{"type":"list","element-id":110,"element":"string","element-required":false},"value-required":false}},
 {"id":111,"name":"id","required":true,"type":"string"}
]}`

func mustSchema(t testing.TB, js string) *iceberg.Schema {
	t.Helper()
	var sc iceberg.Schema
	require.NoError(t, json.Unmarshal([]byte(js), &sc))
	return &sc
}

// TestSchemaGolden pins the field ids of every format (docs/design.md §4.2: field
// ids are assigned once and never reused). A diff here is a breaking
// change to every existing table.
func TestSchemaGolden(t *testing.T) {
	cases := []struct {
		name       string
		key, value codec.Format
		declared   string
	}{
		{"raw", codec.Raw, codec.Raw, ""},
		{"string", codec.String, codec.String, ""},
		{"json", codec.Raw, codec.JSON, declaredJSON},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var declared *iceberg.Schema
			if c.declared != "" {
				declared = mustSchema(t, c.declared)
			}
			sc, err := codec.TableSchema(c.key, c.value, declared)
			require.NoError(t, err)
			checkGolden(t, "schema_"+c.name+".json", sc)
		})
	}
	t.Run("dlq", func(t *testing.T) {
		checkGolden(t, "schema_dlq.json", codec.DLQSchema(codec.Raw))
	})
}

func checkGolden(t *testing.T, name string, sc *iceberg.Schema) {
	t.Helper()
	got, err := json.MarshalIndent(sc, "", "  ")
	require.NoError(t, err)
	got = append(got, '\n')
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	require.JSONEq(t, string(want), string(got))
}

// TestSchemaIDs states the pinned ids explicitly, independent of the
// golden files.
func TestSchemaIDs(t *testing.T) {
	sc, err := codec.TableSchema(codec.String, codec.JSON, mustSchema(t, declaredJSON))
	require.NoError(t, err)
	want := map[string]int{
		"_kafka": 1, "_kafka.partition": 2, "_kafka.offset": 3, "_kafka.timestamp": 4,
		"_kafka.timestamp_type": 5, "_kafka.key": 6, "_kafka.headers": 7,
		"_kafka.headers.element": 8, "_kafka.headers.element.key": 9, "_kafka.headers.element.value": 10,
		// json value columns: pre-order from 11.
		"type": 11, "properties": 12, "properties.mag": 13, "properties.time": 14,
		"geometry": 15, "geometry.coordinates": 16, "geometry.coordinates.element": 17,
		"tags": 18, "tags.key": 19, "tags.value": 20, "tags.value.element": 21, "id": 22,
	}
	for name, id := range want {
		f, ok := sc.FindFieldByName(name)
		require.True(t, ok, name)
		require.Equal(t, id, f.ID, name)
	}
	key, _ := sc.FindFieldByName("_kafka.key")
	require.Equal(t, iceberg.PrimitiveTypes.String, key.Type)
	require.False(t, key.Required)
	typ, _ := sc.FindFieldByName("type")
	require.Equal(t, "GeoJSON object type", typ.Doc)
	props, _ := sc.FindFieldByName("properties")
	require.True(t, props.Required)
	elem, _ := sc.FindFieldByName("geometry.coordinates")
	require.True(t, elem.Type.(*iceberg.ListType).ElementRequired)

	for _, f := range []codec.Format{codec.Raw, codec.String} {
		sc, err := codec.TableSchema(codec.Raw, f, nil)
		require.NoError(t, err)
		v, ok := sc.FindFieldByName("value")
		require.True(t, ok)
		require.Equal(t, 11, v.ID)
		require.False(t, v.Required)
		k, _ := sc.FindFieldByName("_kafka.key")
		require.Equal(t, iceberg.PrimitiveTypes.Binary, k.Type)
	}
	dlq := codec.DLQSchema(codec.String)
	v, _ := dlq.FindFieldByName("value")
	e, _ := dlq.FindFieldByName("error")
	require.Equal(t, 11, v.ID)
	require.Equal(t, iceberg.PrimitiveTypes.Binary, v.Type)
	require.Equal(t, 12, e.ID)
	require.True(t, e.Required)
}

func TestSchemaErrors(t *testing.T) {
	_, err := codec.TableSchema(codec.Raw, codec.JSON, nil)
	require.ErrorContains(t, err, "declared schema")

	_, err = codec.TableSchema(codec.JSON, codec.Raw, nil)
	require.ErrorIs(t, err, codec.ErrUnsupported)
	require.ErrorContains(t, err, "json")

	_, err = codec.TableSchema("xml", codec.Raw, nil)
	require.ErrorIs(t, err, codec.ErrUnsupported)

	_, err = codec.TableSchema(codec.Raw, "protobuf", nil)
	require.EqualError(t, err, "value format protobuf needs a declared schema")

	_, err = codec.TableSchema(codec.Avro, codec.Avro, iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "a", Type: iceberg.PrimitiveTypes.String}))
	require.EqualError(t, err, `value format avro: declared schema has no value field`)
	_, err = codec.TableSchema(codec.Avro, codec.Avro, iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "a", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 2, Name: "b", Type: iceberg.PrimitiveTypes.String}))
	require.EqualError(t, err, `key format avro: the first declared field must be the key column "key"`)
	// A decoded key and a value field named key would be one name twice.
	_, err = codec.TableSchema(codec.Protobuf, codec.Avro, iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "key", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 2, Name: "key", Type: iceberg.PrimitiveTypes.String}))
	require.EqualError(t, err, "declared field key: the name appears twice in one struct")

	_, err = codec.TableSchema(codec.Raw, codec.Raw, mustSchema(t, declaredJSON))
	require.Error(t, err)

	_, err = codec.TableSchema(codec.Raw, codec.JSON, iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "_kafka", Type: iceberg.PrimitiveTypes.String}))
	require.ErrorContains(t, err, "_kafka")

	// Two fields of one struct with one name: a JSON key could fill only
	// one of them, and the other would always be null.
	_, err = codec.TableSchema(codec.Raw, codec.JSON, iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "a", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 2, Name: "a", Type: iceberg.PrimitiveTypes.Int64}))
	require.EqualError(t, err, "declared field a: the name appears twice in one struct")
	_, err = codec.TableSchema(codec.Raw, codec.JSON, iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "l", Type: &iceberg.ListType{ElementID: 2, Element: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 3, Name: "b", Type: iceberg.PrimitiveTypes.String}, {ID: 4, Name: "b", Type: iceberg.PrimitiveTypes.String}}}}}))
	require.EqualError(t, err, "declared field l.element.b: the name appears twice in one struct")

	for _, typ := range []iceberg.Type{
		iceberg.PrimitiveTypes.TimestampNs,
		iceberg.PrimitiveTypes.Unknown,
		&iceberg.MapType{KeyID: 2, KeyType: iceberg.PrimitiveTypes.Int32, ValueID: 3, ValueType: iceberg.PrimitiveTypes.String},
		&iceberg.ListType{ElementID: 2, Element: iceberg.PrimitiveTypes.TimestampTzNs},
	} {
		_, err = codec.TableSchema(codec.Raw, codec.JSON, iceberg.NewSchema(0,
			iceberg.NestedField{ID: 1, Name: "a", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
				{ID: 4, Name: "b", Type: typ}}}}))
		require.ErrorIs(t, err, codec.ErrUnsupported, typ.String())
		require.ErrorContains(t, err, "field a.b", typ.String())
	}
}

// A declared schema's required map values become optional, at any depth,
// with the same field ids: iceberg-go v0.7.0 cannot scan required map
// values. Required list elements are kept (iceberg-go reads them).
func TestTableSchemaOptionalMapValues(t *testing.T) {
	P := iceberg.PrimitiveTypes
	sc, err := codec.TableSchema(codec.Raw, codec.JSON, iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "counts", Required: true, Type: &iceberg.MapType{KeyID: 2, KeyType: P.String,
			ValueID: 3, ValueType: P.Int64, ValueRequired: true}},
		iceberg.NestedField{ID: 4, Name: "deep", Type: &iceberg.ListType{ElementID: 5, ElementRequired: true,
			Element: &iceberg.MapType{KeyID: 6, KeyType: P.String, ValueID: 7, ValueRequired: true,
				ValueType: &iceberg.MapType{KeyID: 8, KeyType: P.String, ValueID: 9, ValueType: P.Float64, ValueRequired: true}}}}))
	require.NoError(t, err)
	want := iceberg.NewSchema(0, sc.Fields()[0],
		iceberg.NestedField{ID: 11, Name: "counts", Required: true, Type: &iceberg.MapType{KeyID: 12, KeyType: P.String,
			ValueID: 13, ValueType: P.Int64}},
		iceberg.NestedField{ID: 14, Name: "deep", Type: &iceberg.ListType{ElementID: 15, ElementRequired: true,
			Element: &iceberg.MapType{KeyID: 16, KeyType: P.String, ValueID: 17,
				ValueType: &iceberg.MapType{KeyID: 18, KeyType: P.String, ValueID: 19, ValueType: P.Float64}}}})
	require.True(t, want.Equals(sc), "got %s", sc)
}

// A registry table: _kafka, the decoded key column, then the value
// columns, ids in pre-order from 11; Avro and Protobuf maps may have keys
// other than strings.
func TestRegistryTableSchema(t *testing.T) {
	sc, err := codec.TableSchema(codec.Avro, codec.Protobuf, iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "key", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 2, Name: "counts", Type: &iceberg.MapType{KeyID: 3, KeyType: iceberg.PrimitiveTypes.Int32,
			ValueID: 4, ValueType: iceberg.PrimitiveTypes.Int64, ValueRequired: true}, Required: true},
		iceberg.NestedField{ID: 5, Name: "name", Type: iceberg.PrimitiveTypes.String}))
	require.NoError(t, err)
	fs := sc.Fields()
	require.Len(t, fs, 4)
	require.Equal(t, []string{"_kafka", "key", "counts", "name"}, []string{fs[0].Name, fs[1].Name, fs[2].Name, fs[3].Name})
	require.Equal(t, []int{11, 12, 15}, []int{fs[1].ID, fs[2].ID, fs[3].ID})
	m := fs[2].Type.(*iceberg.MapType)
	require.Equal(t, 13, m.KeyID)
	require.Equal(t, 14, m.ValueID)
	require.Equal(t, iceberg.PrimitiveTypes.Int32, m.KeyType)
	require.False(t, m.ValueRequired, "iceberg-go v0.7.0 cannot scan required map values")
	require.Equal(t, 1, codec.KeyColumns(codec.Avro))
	require.Equal(t, 0, codec.KeyColumns(codec.String))
}

// A schema whose JSON passes MaxSchemaJSON is refused: manifests could not
// carry it (found by a trial: 50,000 inferred columns made a table that
// never committed).
func TestCheckSchemaSize(t *testing.T) {
	wide := func(n int) *iceberg.Schema {
		fields := make([]iceberg.NestedField, n)
		for i := range fields {
			fields[i] = iceberg.NestedField{ID: i + 1, Name: fmt.Sprintf("k%d", i), Type: iceberg.PrimitiveTypes.String}
		}
		return iceberg.NewSchema(0, fields...)
	}
	require.NoError(t, codec.CheckSchemaSize(wide(1000)))
	err := codec.CheckSchemaSize(wide(50000))
	require.ErrorIs(t, err, codec.ErrSchemaTooLarge)
	require.ErrorContains(t, err, "(50000 fields), more than 524288")
}

// CheckSchema refuses a name or doc PostgreSQL's jsonb cannot hold
// (U+0000, invalid UTF-8), at any depth (found by fuzzing).
func TestCheckSchemaText(t *testing.T) {
	P := iceberg.PrimitiveTypes
	in := func(f iceberg.NestedField) *iceberg.Schema {
		return iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "l", Type: &iceberg.ListType{ElementID: 2,
			Element: &iceberg.StructType{FieldList: []iceberg.NestedField{f}}}})
	}
	require.NoError(t, codec.CheckSchema(in(iceberg.NestedField{ID: 3, Name: "ü", Type: P.String, Doc: "ok"})))
	for _, f := range []iceberg.NestedField{
		{ID: 3, Name: "a\x00", Type: P.String},
		{ID: 3, Name: "a", Type: P.String, Doc: "\x00"},
		{ID: 3, Name: "\xff", Type: P.String},
		{ID: 3, Name: "m", Type: &iceberg.MapType{KeyID: 4, KeyType: P.String, ValueID: 5, ValueType: &iceberg.StructType{
			FieldList: []iceberg.NestedField{{ID: 6, Name: "\x00", Type: P.Int32}}}}},
	} {
		err := codec.CheckSchema(in(f))
		require.ErrorIs(t, err, codec.ErrSchemaText, "%q %q", f.Name, f.Doc)
	}
	require.ErrorContains(t, codec.CheckSchema(in(iceberg.NestedField{ID: 3, Name: "a\x00", Type: P.String})), `field "l.element.a\x00"`)
}
