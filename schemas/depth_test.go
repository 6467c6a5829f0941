package schemas_test

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/codec"
	"github.com/minkhq/mink/schemas"
)

// lists is column l: a list of lists …, levels deep counting l.
func lists(levels int) []iceberg.NestedField {
	var t iceberg.Type = iceberg.PrimitiveTypes.String
	for i := range levels - 1 {
		t = &iceberg.ListType{ElementID: i + 2, Element: t}
	}
	return []iceberg.NestedField{{ID: 1, Name: "l", Type: t}}
}

// Declared columns nested codec.MaxTypeDepth levels make a table schema;
// deeper is refused with the path before a path per level is built: a
// schema file of 10,000 levels (as deep as encoding/json reads) costs
// little.
func TestInitialDepth(t *testing.T) {
	_, _, err := schemas.Initial(codec.Raw, codec.JSON, lists(codec.MaxTypeDepth))
	require.NoError(t, err)
	_, _, err = schemas.Initial(codec.Raw, codec.JSON, lists(codec.MaxTypeDepth+1))
	require.True(t, errors.Is(err, codec.ErrUnsupported))
	require.EqualError(t, err, "field l"+strings.Repeat(".element", codec.MaxTypeDepth)+": types nested deeper than 64 levels: "+codec.ErrUnsupported.Error())

	deep := lists(10_000)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, _, err = schemas.Initial(codec.Raw, codec.JSON, deep)
	runtime.ReadMemStats(&after)
	require.ErrorIs(t, err, codec.ErrUnsupported)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "bytes allocated")
}
