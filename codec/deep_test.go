package codec_test

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/codec"
)

// nestedStructs is a schema whose column a holds a struct with field a …,
// levels deep, a long at the bottom.
func nestedStructs(levels int) *iceberg.Schema {
	var t iceberg.Type = iceberg.PrimitiveTypes.Int64
	for i := range levels - 1 {
		t = &iceberg.StructType{FieldList: []iceberg.NestedField{{ID: i + 2, Name: "a", Type: t}}}
	}
	return iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "a", Type: t})
}

// nestedLists is a schema whose column l is a list of lists …, levels
// deep counting l.
func nestedLists(levels int) *iceberg.Schema {
	var t iceberg.Type = iceberg.PrimitiveTypes.String
	for i := range levels - 1 {
		t = &iceberg.ListType{ElementID: i + 2, Element: t}
	}
	return iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "l", Type: t})
}

// A declared schema nested MaxTypeDepth levels is a table schema; one
// more level is refused with the path, also at 10,000 levels (as deep as
// encoding/json lets a schema file be), in little memory.
func TestTableSchemaDepth(t *testing.T) {
	_, err := codec.TableSchema(codec.Raw, codec.JSON, nestedStructs(codec.MaxTypeDepth))
	require.NoError(t, err)
	_, err = codec.TableSchema(codec.Raw, codec.JSON, nestedLists(codec.MaxTypeDepth))
	require.NoError(t, err)

	_, err = codec.TableSchema(codec.Raw, codec.JSON, nestedStructs(codec.MaxTypeDepth+1))
	require.True(t, errors.Is(err, codec.ErrUnsupported))
	path := strings.TrimSuffix(strings.Repeat("a.", codec.MaxTypeDepth+1), ".")
	require.EqualError(t, err, "field "+path+": types nested deeper than 64 levels: "+codec.ErrUnsupported.Error())
	_, err = codec.TableSchema(codec.Raw, codec.JSON, nestedLists(codec.MaxTypeDepth+1))
	require.EqualError(t, err, "field l"+strings.Repeat(".element", codec.MaxTypeDepth)+": types nested deeper than 64 levels: "+codec.ErrUnsupported.Error())

	deep := nestedLists(10_000)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err = codec.TableSchema(codec.Raw, codec.JSON, deep)
	runtime.ReadMemStats(&after)
	require.ErrorIs(t, err, codec.ErrUnsupported)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "bytes allocated")
}

// The records of the deep-nesting bug report, decoded for the table that
// --infer makes of them (id long): the two deep ones are dead letters by
// the decoder's own depth bound (1000), found in little memory, and the
// third decodes.
func TestJSONVeryDeep(t *testing.T) {
	sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64})
	a := strings.Repeat(`{"a":`, 100_000) + "1" + strings.Repeat("}", 100_000)
	b := strings.Repeat("[", 400_000) + strings.Repeat("]", 400_000)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, _, errA := rows(t, sc, a)
	_, _, errB := rows(t, sc, b)
	runtime.ReadMemStats(&after)
	require.EqualError(t, errA, "invalid JSON at byte 5000: nesting too deep")
	require.EqualError(t, errB, "value is not a JSON object (found array)")
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(4<<20), "bytes allocated")

	rec, _, err := rows(t, sc, `{"id":1}`)
	require.NoError(t, err)
	require.Equal(t, int64(1), scalar(rec.Column(1)))
}

// An unknown field holding a value nested up to the decoder's bound
// decodes (the field counted unknown), without a path per level.
func TestJSONDeepUnknown(t *testing.T) {
	sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64})
	v := `{"id":2,"x":` + strings.Repeat(`{"a":`, 998) + "1" + strings.Repeat("}", 998) + "}"
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	rec, dec, err := rows(t, sc, v)
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	require.Equal(t, int64(2), scalar(rec.Column(1)))
	require.Equal(t, 1, dec.Unknown())
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "bytes allocated")
}
