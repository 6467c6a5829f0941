package avro_test

import (
	"strings"
	"testing"

	"github.com/apache/iceberg-go"

	"github.com/minkhq/mink/codec/avro"
)

// fieldsByID turns ConvertFields' paths into the ids of target (Convert's
// placeholder ids), as a table version keeps them.
func fieldsByID(t *testing.T, target iceberg.Type, byPath map[string]avro.Field) avro.Fields {
	t.Helper()
	out := avro.Fields{}
	var walk func(typ iceberg.Type, prefix string)
	walk = func(typ iceberg.Type, prefix string) {
		switch typ := typ.(type) {
		case *iceberg.StructType:
			for _, f := range typ.FieldList {
				p := f.Name
				if prefix != "" {
					p = prefix + "." + f.Name
				}
				if x, ok := byPath[p]; ok {
					out[f.ID] = x
					delete(byPath, p)
				}
				walk(f.Type, p)
			}
		case *iceberg.ListType:
			walk(typ.Element, prefix+".element")
		case *iceberg.MapType:
			walk(typ.ValueType, prefix+".value")
		}
	}
	walk(target, "")
	if len(byPath) > 0 {
		t.Fatalf("paths without a field: %v", byPath)
	}
	return out
}

// TestDefaults reads a v1 record with a v2 reader that added fields with
// defaults of every kind (Avro spec 1.12, "Schema Resolution"): each
// column the writer lacks holds the default, exactly.
func TestDefaults(t *testing.T) {
	v1 := `{"type":"record","name":"Order","namespace":"shop","fields":[{"name":"id","type":"long"}]}`
	v2 := `{"type":"record","name":"Order","namespace":"shop","fields":[
	 {"name":"id","type":"long"},
	 {"name":"priority","type":"int","default":3},
	 {"name":"rate","type":{"type":"bytes","logicalType":"decimal","precision":5,"scale":2},"default":"\u0001\u00f4"},
	 {"name":"big","type":"long","default":9007199254740993},
	 {"name":"ok","type":"boolean","default":true},
	 {"name":"f","type":"float","default":0.1},
	 {"name":"d","type":"double","default":-2.5e-300},
	 {"name":"s","type":"string","default":"é\"x"},
	 {"name":"b","type":"bytes","default":"\u0000\u00ff"},
	 {"name":"color","type":{"type":"enum","name":"Color","symbols":["RED","GREEN"]},"default":"GREEN"},
	 {"name":"fx","type":{"type":"fixed","name":"F2","size":2},"default":"ab"},
	 {"name":"day","type":{"type":"int","logicalType":"date"},"default":-1},
	 {"name":"at","type":{"type":"long","logicalType":"timestamp-millis"},"default":1700000000123},
	 {"name":"u","type":{"type":"string","logicalType":"uuid"},"default":"0A8E7F1C-2B3D-4E5F-8A9B-0C1D2E3F4A5B"},
	 {"name":"dx","type":{"type":"fixed","name":"D16","size":16,"logicalType":"decimal","precision":38,"scale":6},"default":"\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0001\u0000"},
	 {"name":"opt","type":["int","null"],"default":7},
	 {"name":"none","type":["null","int"],"default":null},
	 {"name":"tags","type":{"type":"array","items":"string"},"default":["a","b"]},
	 {"name":"attrs","type":{"type":"map","values":"long"},"default":{"z":1,"a":-2}},
	 {"name":"ship","type":{"type":"record","name":"Ship","fields":[
	   {"name":"mode","type":"string"},
	   {"name":"days","type":"int","default":5}]},"default":{"mode":"air"}},
	 {"name":"inner","type":{"type":"record","name":"Inner","fields":[{"name":"x","type":"int"}]}}
	]}`
	target, byPath, err := avro.ConvertFields(avroSchema(v2))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := byPath["ship.days"]; !ok {
		t.Errorf("no default for nested field ship.days: %v", byPath)
	}
	if _, ok := byPath["none"]; ok {
		t.Errorf("a null default is kept: %v", byPath["none"])
	}
	fields := fieldsByID(t, target, byPath)
	// The table as evolution makes it: new fields optional, inner
	// optional without a default.
	st := target.(*iceberg.StructType)
	for i := range st.FieldList[1:] {
		st.FieldList[1+i].Required = false
	}
	dec, err := avro.NewDecoderFields(avroSchema(v1), st, fields)
	if err != nil {
		t.Fatal(err)
	}
	got := rowsWith(t, dec, st, encode(t, v1, map[string]any{"id": int64(1)}))[0]
	want := `{"at":"2023-11-14T22:13:20.123Z","attrs":[{"key":"a","value":-2},{"key":"z","value":1}],"b":"AP8=","big":9007199254740993,` +
		`"color":"GREEN","d":-2.5e-300,"day":"1969-12-31","dx":"0.000256","f":0.1,"fx":"YWI=","id":1,"inner":null,"none":null,"ok":true,` +
		`"opt":7,"priority":3,"rate":"5","s":"é\"x","ship":{"days":5,"mode":"air"},"tags":["a","b"],"u":"0a8e7f1c-2b3d-4e5f-8a9b-0c1d2e3f4a5b"}`
	if got != want {
		t.Errorf("v1 record read with v2's defaults:\n got %s\nwant %s", got, want)
	}
	// Without the version's fields the same columns are null, as before.
	plain, err := avro.NewDecoder(avroSchema(v1), st)
	if err != nil {
		t.Fatal(err)
	}
	if got := rowsWith(t, plain, st, encode(t, v1, map[string]any{"id": int64(1)}))[0]; !strings.Contains(got, `"priority":null`) {
		t.Errorf("without defaults: %s", got)
	}
}

// TestDefaultsRefused: a default the column cannot hold exactly is
// refused when the schema is converted, naming the field.
func TestDefaultsRefused(t *testing.T) {
	tests := []struct{ name, typ, def, want string }{
		{"decimal wider than its precision", `{"type":"bytes","logicalType":"decimal","precision":3,"scale":2}`, `"\u0003\u00e8"`,
			"field f: unscaled decimal 1000 has more than 3 digits"},
		{"not a uuid", `{"type":"string","logicalType":"uuid"}`, `"nope"`, `field f: "nope" is not a UUID`},
		{"int out of range", `"int"`, `2147483648`, "field f: default 2147483648: 2147483648 is not an integer of type int"},
		{"fraction for a long", `"long"`, `1.5`, "field f: default 1.5: 1.5 is not an integer of type long"},
		{"time of day past 24 h", `{"type":"int","logicalType":"time-millis"}`, `86400000`, "field f: time-millis 86400000 outside a day"},
		{"timestamp-nanos not whole µs", `{"type":"long","logicalType":"timestamp-nanos"}`, `1001`, "field f: timestamp of 1001 ns is not a whole number of microseconds"},
		{"bytes above U+00FF (hamba/avro refuses it)", `"bytes"`, `"\u0100"`, `avro: invalid default for field f`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := `{"type":"record","name":"R","fields":[{"name":"f","type":` + tt.typ + `,"default":` + tt.def + `}]}`
			_, _, err := avro.ConvertFields(avroSchema(s))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want %s", err, tt.want)
			}
		})
	}
}

// TestAliases: a writer field named as an alias of a table field fills
// that field (Avro spec 1.12, "Aliases"), also nested.
func TestAliases(t *testing.T) {
	v1 := `{"type":"record","name":"R","fields":[{"name":"qty","type":"int"},
	 {"name":"c","type":{"type":"record","name":"C","fields":[{"name":"nm","type":"string"}]}}]}`
	v2 := `{"type":"record","name":"R","fields":[{"name":"quantity","type":"long","aliases":["qty"]},
	 {"name":"c","type":{"type":"record","name":"C","fields":[{"name":"name","type":"string","aliases":["nm"]}]}}]}`
	target, byPath, err := avro.ConvertFields(avroSchema(v2))
	if err != nil {
		t.Fatal(err)
	}
	fields := fieldsByID(t, target, byPath)
	dec, err := avro.NewDecoderFields(avroSchema(v1), target, fields)
	if err != nil {
		t.Fatal(err)
	}
	got := rowsWith(t, dec, target, encode(t, v1, map[string]any{"qty": int32(-4), "c": map[string]any{"nm": "ann"}}))[0]
	if want := `{"c":{"name":"ann"},"quantity":-4}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if _, err := avro.NewDecoder(avroSchema(v1), target); err == nil || err.Error() != "field qty: written, but the table has no such field" {
		t.Errorf("without aliases: %v", err)
	}
}

// TestRecursive: a recursive record's columns are its fields down to the
// record met again, which is a string column of its Avro JSON text: a
// linked list and a tree, whole at any depth.
func TestRecursive(t *testing.T) {
	list := `{"type":"record","name":"Node","namespace":"n","fields":[{"name":"value","type":"int"},{"name":"next","type":["null","Node"]}]}`
	tree := `{"type":"record","name":"Tree","fields":[{"name":"value","type":"double"},{"name":"label","type":"bytes"},
	 {"name":"children","type":{"type":"array","items":"Tree"}},
	 {"name":"meta","type":{"type":"map","values":["null","long","Tree"]}}]}`
	lt, err := avro.Convert(avroSchema(list))
	if err != nil {
		t.Fatal(err)
	}
	if want := "struct<1: value: required int, 2: next: optional string>"; lt.String() != want {
		t.Errorf("list: got %s, want %s", lt, want)
	}
	tt, err := avro.Convert(avroSchema(tree))
	if err != nil {
		t.Fatal(err)
	}
	if want := "struct<1: value: required double, 2: label: required binary, 3: children: required list<string>, " +
		"5: meta: required map<string, struct<8: tag: required int, 9: field0: optional long, 10: field1: optional string>>>"; tt.String() != want {
		t.Errorf("tree: got %s, want %s", tt, want)
	}
	deep := map[string]any{"value": 0, "next": nil}
	for i := 1; i <= 200; i++ {
		deep = map[string]any{"value": i, "next": map[string]any{"n.Node": deep}}
	}
	got := rows(t, avroSchema(list), nil,
		encode(t, list, map[string]any{"value": 1, "next": map[string]any{"n.Node": map[string]any{"value": 2, "next": nil}}}),
		encode(t, list, map[string]any{"value": 3, "next": nil}),
		encode(t, list, deep))
	if want := `{"next":"{\"value\":2,\"next\":null}","value":1}`; got[0] != want {
		t.Errorf("list row 0: got %s, want %s", got[0], want)
	}
	if want := `{"next":null,"value":3}`; got[1] != want {
		t.Errorf("list row 1: got %s, want %s", got[1], want)
	}
	if n := strings.Count(got[2], `{\"n.Node\":`); n != 199 {
		t.Errorf("deep list: %d nested nodes in the text, want 199 (never cut short)", n)
	}
	leaf := map[string]any{"value": -0.5, "label": []byte{0, 0xff, '"'}, "children": []any{},
		"meta": map[string]any{"n": map[string]any{"long": int64(-1) << 62}}}
	v := map[string]any{"value": 1.0, "label": []byte("r"), "children": []any{leaf},
		"meta": map[string]any{"sub": map[string]any{"Tree": leaf}}}
	got = rows(t, avroSchema(tree), nil, encode(t, tree, v))
	leafText := `{\"value\":-0.5,\"label\":\"\\u0000ÿ\\\"\",\"children\":[],\"meta\":{\"n\":{\"long\":-4611686018427387904}}}`
	want := `{"children":["` + leafText + `"],"label":"cg==",` +
		`"meta":[{"key":"sub","value":{"field0":null,"field1":"` + leafText + `","tag":1}}],"value":1}`
	if got[0] != want {
		t.Errorf("tree:\n got %s\nwant %s", got[0], want)
	}
}

// TestRecursiveDeadLetters: a recursive value nested deeper than
// MaxJSONDepth, or cut short, is a Decode error naming the column, never
// a shortened text.
func TestRecursiveDeadLetters(t *testing.T) {
	list := `{"type":"record","name":"Node","fields":[{"name":"value","type":"int"},{"name":"next","type":["null","Node"]}]}`
	s := avroSchema(list)
	target, err := avro.Convert(s)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := avro.NewDecoder(s, target)
	if err != nil {
		t.Fatal(err)
	}
	// value 0, then next: branch 1 (Node) value 0, ... as raw bytes: each
	// level is the zig-zag int 0 and the union index 1 (0x02).
	var deep []byte
	deep = append(deep, 0x00)
	for range avro.MaxJSONDepth + 1 {
		deep = append(deep, 0x02, 0x00)
	}
	deep = append(deep, 0x00)
	if err := dec.Decode(deep); err == nil || err.Error() != "field next: recursive value nested deeper than 10000 levels" {
		t.Errorf("deep: %v", err)
	}
	if err := dec.Decode([]byte{0x00, 0x02, 0x00, 0x02}); err == nil || err.Error() != "field next: truncated payload at byte 4 of 4" {
		t.Errorf("truncated: %v", err)
	}
	if err := dec.Decode([]byte{0x00, 0x02, 0x00, 0x04}); err == nil || err.Error() != "field next: union index 2 out of range [0, 2)" {
		t.Errorf("bad union index: %v", err)
	}
}

// TestNestedDefaults: fields added with defaults inside list elements,
// map values and union branches take them too; an alias inside a list
// element renames there.
func TestNestedDefaults(t *testing.T) {
	v1 := `{"type":"record","name":"R","fields":[
	 {"name":"items","type":{"type":"array","items":{"type":"record","name":"Item","fields":[{"name":"code","type":"string"}]}}},
	 {"name":"byName","type":{"type":"map","values":{"type":"record","name":"V","fields":[{"name":"x","type":"int"}]}}},
	 {"name":"u","type":["null",{"type":"record","name":"U","fields":[{"name":"y","type":"int"}]}]}]}`
	v2 := `{"type":"record","name":"R","fields":[
	 {"name":"items","type":{"type":"array","items":{"type":"record","name":"Item","fields":[{"name":"sku","type":"string","aliases":["code"]},
	   {"name":"qty","type":"int","default":1}]}}},
	 {"name":"byName","type":{"type":"map","values":{"type":"record","name":"V","fields":[{"name":"x","type":"int"},
	   {"name":"tags","type":{"type":"array","items":"string"},"default":["t"]}]}}},
	 {"name":"u","type":["null",{"type":"record","name":"U","fields":[{"name":"y","type":"int"},{"name":"z","type":"double","default":0.5}]}]}]}`
	target, byPath, err := avro.ConvertFields(avroSchema(v2))
	if err != nil {
		t.Fatal(err)
	}
	fields := fieldsByID(t, target, byPath)
	dec, err := avro.NewDecoderFields(avroSchema(v1), target, fields)
	if err != nil {
		t.Fatal(err)
	}
	got := rowsWith(t, dec, target, encode(t, v1, map[string]any{
		"items":  []any{map[string]any{"code": "a"}, map[string]any{"code": "b"}},
		"byName": map[string]any{"k": map[string]any{"x": 9}},
		"u":      map[string]any{"U": map[string]any{"y": 2}},
	}))[0]
	want := `{"byName":[{"key":"k","value":{"tags":["t"],"x":9}}],"items":[{"qty":1,"sku":"a"},{"qty":1,"sku":"b"}],"u":{"y":2,"z":0.5}}`
	if got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}
