package protobuf_test

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
)

func mathFloat64bits(f float64) uint64 { return math.Float64bits(f) }

func recordJSON(t testing.TB, rec arrow.RecordBatch) []string {
	var buf bytes.Buffer
	require.NoError(t, array.RecordToJSON(rec, &buf))
	return strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
}

// run decodes and appends values in a loop, a fresh record builder per
// pass, and reports records/s.
func run(b *testing.B, fields []arrow.Field, values [][]byte, decode func([]byte) error, appendTo func([]array.Builder)) {
	var size int64
	for _, v := range values {
		size += int64(len(v))
	}
	asc := arrow.NewSchema(fields, nil)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		rb := array.NewRecordBuilder(memory.DefaultAllocator, asc)
		cols := rb.Fields()
		for _, v := range values {
			if err := decode(v); err != nil {
				b.Fatal(err)
			}
			appendTo(cols)
		}
		rb.Release()
	}
	b.ReportMetric(float64(len(values)*b.N)/b.Elapsed().Seconds(), "records/s")
}
