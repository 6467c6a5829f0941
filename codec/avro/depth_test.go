package avro_test

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/codec/avro"
)

// arrays is k arrays nested around long.
func arrays(k int) string {
	return strings.Repeat(`{"type":"array","items":`, k) + `"long"` + strings.Repeat("}", k)
}

// records is k records R1{a: R2{a: … {a: long}}} nested in one another.
func records(k int) string {
	var b strings.Builder
	for i := 1; i <= k; i++ {
		fmt.Fprintf(&b, `{"type":"record","name":"R%d","fields":[{"name":"a","type":`, i)
	}
	b.WriteString(`"long"`)
	b.WriteString(strings.Repeat("}]}", k))
	return b.String()
}

// Types nested MaxDepth levels convert; one more is refused with the path.
func TestConvertDepth(t *testing.T) {
	// f is level 1, each array's element one more.
	_, err := avro.Convert(avroSchema(record(arrays(avro.MaxDepth - 1))))
	require.NoError(t, err)
	_, err = avro.Convert(avroSchema(record(arrays(avro.MaxDepth))))
	require.True(t, errors.Is(err, avro.ErrUnsupported))
	require.EqualError(t, err, "field f"+strings.Repeat(".element", avro.MaxDepth)+": types nested deeper than 64 levels: "+avro.ErrUnsupported.Error())

	_, err = avro.Convert(avroSchema(records(avro.MaxDepth)))
	require.NoError(t, err)
	_, err = avro.Convert(avroSchema(records(avro.MaxDepth + 1)))
	path := strings.TrimSuffix(strings.Repeat("a.", avro.MaxDepth+1), ".")
	require.EqualError(t, err, "field "+path+": types nested deeper than 64 levels: "+avro.ErrUnsupported.Error())

	// Map values and complex union branches are levels too.
	maps := strings.Repeat(`{"type":"map","values":`, avro.MaxDepth) + `"long"` + strings.Repeat("}", avro.MaxDepth)
	_, err = avro.Convert(avroSchema(record(maps)))
	require.EqualError(t, err, "field f"+strings.Repeat(".value", avro.MaxDepth)+": types nested deeper than 64 levels: "+avro.ErrUnsupported.Error())
	unions := strings.Repeat(`["string",{"type":"array","items":`, avro.MaxDepth/2) + `"long"` + strings.Repeat("}]", avro.MaxDepth/2)
	_, err = avro.Convert(avroSchema(record(unions)))
	require.EqualError(t, err, "field f"+strings.Repeat(".field1.element", avro.MaxDepth/2)+": types nested deeper than 64 levels: "+avro.ErrUnsupported.Error())
}

// A registry schema of 5,000 nested arrays is refused without building
// a path per level (which grows with the square of the depth: 100 MB
// here); one of 100,000 is refused by hamba's JSON parser, with an error
// cut short rather than quoting the 2.4 MB schema.
func TestConvertVeryDeep(t *testing.T) {
	for _, tt := range []struct {
		depth  int
		prefix string
	}{
		{5_000, "field f.element.element"},
		{100_000, `avro: schema 0: avro: unknown type: {"type":"record","name":"R","fields":[{"name":"f","type":{"type":"array","items":`},
	} {
		s := avroSchema(record(arrays(tt.depth)))
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := avro.Convert(s)
		runtime.ReadMemStats(&after)
		require.Error(t, err)
		require.True(t, strings.HasPrefix(err.Error(), tt.prefix), err.Error()[:200])
		require.Less(t, len(err.Error()), 1000)
		require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(32<<20), "bytes allocated")
	}
}
