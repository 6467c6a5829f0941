package protobuf_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/codec/protobuf"
)

// chain is messages M0 { M1 a = 1; } … M{k-1} { int64 a = 1; }: fields
// k levels deep, counting M0's.
func chain(k int) string {
	var b strings.Builder
	b.WriteString("syntax = \"proto3\";\npackage p;\n")
	for i := 0; i < k-1; i++ {
		fmt.Fprintf(&b, "message M%d { M%d a = 1; }\n", i, i+1)
	}
	fmt.Fprintf(&b, "message M%d { int64 a = 1; }\n", k-1)
	return b.String()
}

// Message fields nested MaxDepth levels convert; one more is refused
// with the path.
func TestConvertDepth(t *testing.T) {
	_, err := protobuf.Convert(schema(chain(protobuf.MaxDepth)), []int{0})
	require.NoError(t, err)
	_, err = protobuf.Convert(schema(chain(protobuf.MaxDepth+1)), []int{0})
	path := strings.TrimSuffix(strings.Repeat("a.", protobuf.MaxDepth), ".")
	require.EqualError(t, err, "field "+path+": messages nested deeper than 64 levels")
}

// A chain of 20,000 messages is refused without building a path per
// level (which grows with the square of the depth: 400 MB here); what is
// allocated, about 90 MB, is compiling the schema.
func TestConvertVeryDeep(t *testing.T) {
	s := schema(chain(20_000))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := protobuf.Convert(s, []int{0})
	runtime.ReadMemStats(&after)
	require.ErrorContains(t, err, "messages nested deeper than 64 levels")
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(160<<20), "bytes allocated")
}
