package infer_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/codec/infer"
)

// show renders t with field ids and required-ness: "1 a: long",
// "list<2: double>" ("required" would precede a required type).
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

func TestInfer(t *testing.T) {
	tests := []struct {
		name    string
		values  []string
		want    string
		omitted []string
	}{
		{"scalars", []string{`{"s": "x", "t": true, "f": false, "i": -42, "d": 1.5, "e": 1e3, "z": 0}`},
			"struct<1 s: string, 2 t: boolean, 3 f: boolean, 4 i: long, 5 d: double, 6 e: double, 7 z: long>", nil},
		{"keys in first-seen order across records", []string{`{"b": 1}`, `{"a": 2, "b": 3}`, `{"c": "x", "a": 4}`},
			"struct<1 b: long, 2 a: long, 3 c: string>", nil},
		{"long and double: double when every integer is exact", []string{`{"n": 9007199254740992}`, `{"n": 0.5}`, `{"n": -3}`},
			"struct<1 n: double>", nil},
		{"long and double: string when an integer is not exact", []string{`{"n": 9007199254740993}`, `{"n": 0.5}`},
			"struct<1 n: string>", nil},
		{"long alone beyond 2^53 stays long", []string{`{"n": 9223372036854775807}`, `{"n": -9223372036854775808}`},
			"struct<1 n: long>", nil},
		{"integer beyond long: double when exact", []string{`{"n": 18446744073709551616}`},
			"struct<1 n: double>", nil},
		{"integer beyond long: string when not exact", []string{`{"n": 18446744073709551617}`},
			"struct<1 n: string>", nil},
		{"number out of double range", []string{`{"n": 1e400}`, `{"n": 1.5}`},
			"struct<1 n: string>", nil},
		{"number that rounds to zero", []string{`{"n": 1e-400}`},
			"struct<1 n: string>", nil},
		{"mixed scalars are strings", []string{`{"a": "x", "b": 1, "c": true}`, `{"a": 2, "b": false, "c": 1.5}`},
			"struct<1 a: string, 2 b: string, 3 c: string>", nil},
		{"null alone is string", []string{`{"a": null}`, `{"a": null}`},
			"struct<1 a: string>", nil},
		{"null with another kind", []string{`{"a": null, "b": {"x": 1}, "c": [1]}`, `{"a": 2, "b": null, "c": null}`},
			"struct<1 a: long, 2 b: struct<3 x: long>, 4 c: list<5: long>>", nil},
		{"strings are never timestamps", []string{`{"at": "2024-01-01T00:00:00Z", "day": "2024-01-01", "id": "0f8fad5b-d9cb-469f-a165-70867728950e"}`},
			"struct<1 at: string, 2 day: string, 3 id: string>", nil},
		{"objects merge by key", []string{`{"o": {"a": 1, "n": {"x": "s"}}}`, `{"o": {"b": true, "n": {"y": 2.5}}}`},
			"struct<1 o: struct<2 a: long, 3 n: struct<4 x: string, 5 y: double>, 6 b: boolean>>", nil},
		{"arrays", []string{`{"l": [1, 2], "ll": [[1.5], []], "lo": [{"a": 1}, {"b": "x"}], "m": [1, null]}`},
			"struct<1 l: list<2: long>, 3 ll: list<4: list<5: double>>, 6 lo: list<7: struct<8 a: long, 9 b: string>>, 10 m: list<11: long>>", nil},
		{"arrays merge across records", []string{`{"l": [1]}`, `{"l": [2.5]}`, `{"l": []}`},
			"struct<1 l: list<2: double>>", nil},
		{"empty arrays alone are list<string>", []string{`{"l": []}`, `{"l": []}`},
			"struct<1 l: list<2: string>>", nil},
		{"empty objects are left out", []string{`{"a": 1, "e": {}, "n": {"e": {}, "x": 1}, "le": [{}], "en": null}`, `{"e": null, "en": {}}`},
			"struct<1 a: long, 2 n: struct<3 x: long>>", []string{"e", "n.e", "le", "en"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var inf infer.Inferrer
			for _, v := range tt.values {
				require.NoError(t, inf.Add([]byte(v)))
			}
			got, err := inf.Struct()
			require.NoError(t, err)
			require.Equal(t, tt.want, show(got))
			require.Equal(t, tt.omitted, inf.Omitted())
		})
	}
}

func TestInferConflicts(t *testing.T) {
	tests := []struct {
		name   string
		values []string
		want   string
	}{
		{"object and string", []string{`{"a": {"x": 1}}`, `{"b": 1}`, `{"a": "x"}`},
			"conflicting JSON types: field a: seen as an object (record 1) and as a string (record 3); one column has one type: declare the schema instead of inferring it"},
		{"array and numbers", []string{`{"o": {"a": 1}}`, `{"o": {"a": [1]}}`, `{"o": {"a": 2.5}}`},
			"conflicting JSON types: field o.a: seen as a number (record 1) and as an array (record 2); one column has one type: declare the schema instead of inferring it"},
		{"object and array in a list", []string{`{"l": [{"a": 1}, [1], true]}`},
			"conflicting JSON types: field l.element: seen as an object (record 1) and as an array (record 1) and as a boolean (record 1); one column has one type: declare the schema instead of inferring it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var inf infer.Inferrer
			for _, v := range tt.values {
				require.NoError(t, inf.Add([]byte(v)))
			}
			_, err := inf.Struct()
			require.ErrorIs(t, err, infer.ErrConflict)
			require.EqualError(t, err, tt.want)
		})
	}
}

func TestInferAddRefuses(t *testing.T) {
	tests := []struct {
		value string
		want  string
	}{
		{``, "invalid JSON: unexpected EOF"},
		{`{"a": 1`, "invalid JSON: unexpected EOF"},
		{`{"a": }`, "invalid JSON: invalid character '}' looking for beginning of value"},
		{`{"a": 1} {}`, "invalid JSON: data after the value"},
		{`[{"a": 1}]`, "value is an array, not a JSON object"},
		{`null`, "value is null, not a JSON object"},
		{`"x"`, "value is a string, not a JSON object"},
		{`{"a": {"b": 1, "b": 2}}`, "field a.b: the key appears twice in one object"},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			var inf infer.Inferrer
			require.NoError(t, inf.Add([]byte(`{"a": "first"}`)))
			require.EqualError(t, inf.Add([]byte(tt.value)), tt.want)
			// A failed Add leaves the type as it was, but counts the record.
			require.NoError(t, inf.Add([]byte(`{"z": {"x": 1}}`)))
			got, err := inf.Struct()
			require.NoError(t, err)
			require.Equal(t, "struct<1 a: string, 2 z: struct<3 x: long>>", show(got))
			require.NoError(t, inf.Add([]byte(`{"a": {"x": 1}}`)))
			_, err = inf.Struct()
			require.ErrorContains(t, err, "field a: seen as a string (record 1) and as an object (record 4)")
		})
	}
}

func TestInferNothing(t *testing.T) {
	var inf infer.Inferrer
	_, err := inf.Struct()
	require.EqualError(t, err, "no JSON object among the 0 records to infer a schema from")
	require.Error(t, inf.Add([]byte(`[]`)))
	_, err = inf.Struct()
	require.EqualError(t, err, "no JSON object among the 1 records to infer a schema from")
	require.NoError(t, inf.Add([]byte(`{}`)))
	require.NoError(t, inf.Add([]byte(`{"e": {}}`)))
	_, err = inf.Struct()
	require.EqualError(t, err, "no field to infer: the 3 records hold only empty objects")
	require.Equal(t, []string{"e"}, inf.Omitted())
}

// A key holding U+0000 (PostgreSQL's jsonb holds none) or empty names no
// column: it is left out at any depth (found by fuzzing).
func TestInferNULKey(t *testing.T) {
	var inf infer.Inferrer
	require.NoError(t, inf.Add([]byte(`{"a\u0000":1,"b":{"\u0000":"x","c":true,"":1},"d":[{"e\u0000f":null}],"":{"x":1}}`)))
	st, err := inf.Struct()
	require.NoError(t, err)
	require.Equal(t, "struct<1 b: struct<2 c: boolean>>", show(st))
}
