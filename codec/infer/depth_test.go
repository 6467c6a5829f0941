package infer_test

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/codec/infer"
)

// nestObjects is {"a":{"a":…{"a":1}…}} with depth objects.
func nestObjects(depth int) []byte {
	return []byte(strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("}", depth))
}

// nestArrays is {"b":[[…[1]…]]} with depth-1 arrays inside the object.
func nestArrays(depth int) []byte {
	return []byte(`{"b":` + strings.Repeat("[", depth-1) + "1" + strings.Repeat("]", depth-1) + "}")
}

// A value nested deeper than MaxDepth is refused with the path and the
// depth; one exactly MaxDepth deep is inferred.
func TestAddDepth(t *testing.T) {
	var inf infer.Inferrer
	require.NoError(t, inf.Add(nestObjects(infer.MaxDepth)))
	st, err := inf.Struct()
	require.NoError(t, err)
	require.Contains(t, show(st), "struct<64 a: long>")

	path63 := strings.TrimSuffix(strings.Repeat("a.", infer.MaxDepth), ".")
	err = new(infer.Inferrer).Add(nestObjects(infer.MaxDepth + 1))
	require.True(t, errors.Is(err, infer.ErrTooDeep))
	require.EqualError(t, err, "JSON nested too deep to infer: field "+path63+": an object at depth 65, deeper than 64 levels")

	require.NoError(t, new(infer.Inferrer).Add(nestArrays(infer.MaxDepth)))
	err = new(infer.Inferrer).Add(nestArrays(infer.MaxDepth + 1))
	want := "b" + strings.Repeat(".element", infer.MaxDepth-1)
	require.EqualError(t, err, "JSON nested too deep to infer: field "+want+": an array at depth 65, deeper than 64 levels")

	err = new(infer.Inferrer).Add([]byte(strings.Repeat("[", 65) + strings.Repeat("]", 65)))
	require.EqualError(t, err, "JSON nested too deep to infer: field "+strings.TrimPrefix(strings.Repeat(".element", 64), ".")+": an array at depth 65, deeper than 64 levels")
}

// The records of the bug report: 100,000 nested objects and 400,000
// nested arrays used to cost gigabytes (a path string per level, each as
// long as the levels above it). They are refused, in little time and
// memory, and the next record is inferred as usual.
func TestAddVeryDeep(t *testing.T) {
	a := nestObjects(100_000)
	b := []byte(strings.Repeat("[", 400_000) + strings.Repeat("]", 400_000))
	var inf infer.Inferrer
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	errA, errB := inf.Add(a), inf.Add(b)
	runtime.ReadMemStats(&after)
	require.ErrorIs(t, errA, infer.ErrTooDeep)
	require.ErrorIs(t, errB, infer.ErrTooDeep)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(4<<20), "bytes allocated")

	require.NoError(t, inf.Add([]byte(`{"id":1}`)))
	st, err := inf.Struct()
	require.NoError(t, err)
	require.Equal(t, "struct<1 id: long>", show(st))
}
