package jsonschema_test

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/codec/jsonschema"
)

// deepStruct is a schema whose field a holds a struct with field a …,
// levels types deep, a long at the bottom.
func deepStruct(levels int) string {
	open := `{"type":"object","properties":{"a":`
	return strings.Repeat(open, levels) + `{"type":"integer"}` + strings.Repeat("}}", levels)
}

// deepList is a schema whose field b is a list of lists …, levels types
// deep counting b itself.
func deepList(levels int) string {
	return `{"type":"object","properties":{"b":` + strings.Repeat(`{"type":"array","items":`, levels-1) +
		`{"type":"string"}` + strings.Repeat("}", levels-1) + "}}"
}

// Types nested MaxDepth levels convert; one more is refused with the path.
func TestConvertDepth(t *testing.T) {
	got, err := jsonschema.Convert(js(deepStruct(jsonschema.MaxDepth)))
	require.NoError(t, err)
	require.True(t, strings.HasSuffix(show(got), "64 a: long"+strings.Repeat(">", 64)), show(got))

	_, err = jsonschema.Convert(js(deepStruct(jsonschema.MaxDepth + 1)))
	require.True(t, errors.Is(err, jsonschema.ErrUnsupported))
	path := strings.TrimSuffix(strings.Repeat("a.", jsonschema.MaxDepth+1), ".")
	require.EqualError(t, err, "field "+path+": unsupported JSON Schema: types nested deeper than 64 levels")

	_, err = jsonschema.Convert(js(deepList(jsonschema.MaxDepth)))
	require.NoError(t, err)
	_, err = jsonschema.Convert(js(deepList(jsonschema.MaxDepth + 1)))
	require.EqualError(t, err, "field b"+strings.Repeat(".element", jsonschema.MaxDepth)+": unsupported JSON Schema: types nested deeper than 64 levels")

	// A map value counts as a level too.
	deepMap := `{"type":"object","properties":{"m":` + strings.Repeat(`{"type":"object","additionalProperties":`, 64) +
		`{"type":"string"}` + strings.Repeat("}", 64) + "}}"
	_, err = jsonschema.Convert(js(deepMap))
	require.EqualError(t, err, "field m"+strings.Repeat(".value", 64)+": unsupported JSON Schema: types nested deeper than 64 levels")
}

// A registry schema nested 100,000 levels (as types, or as JSON the
// conversion never reaches) is refused by the document's depth bound, in
// little time and memory; the paths of every level would have cost
// gigabytes.
func TestConvertVeryDeep(t *testing.T) {
	types := js(deepStruct(100_000))
	document := js(`{"type":"object","properties":{"a":{"type":"string","x":` +
		strings.Repeat("[", 400_000) + strings.Repeat("]", 400_000) + `}}}`)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, errTypes := jsonschema.Convert(types)
	_, errDoc := jsonschema.Convert(document)
	runtime.ReadMemStats(&after)
	require.EqualError(t, errTypes, "schema 7: invalid JSON: nested deeper than 1000 levels")
	require.EqualError(t, errDoc, "schema 7: invalid JSON: nested deeper than 1000 levels")
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(8<<20), "bytes allocated") // copies of the 2 MB of text included
}
