package codec_test

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/table"

	"github.com/minkhq/mink/codec"
	"github.com/minkhq/mink/internal/testkit"
)

// BenchmarkDecodeJSON measures the JSON decoder alone (Decode and Append
// into Arrow builders) over the USGS week feed. MB/s counts value bytes.
func BenchmarkDecodeJSON(b *testing.B) {
	features := usgsFeatures(b)
	sc, err := codec.TableSchema(codec.Raw, codec.JSON, mustSchema(b, testkit.USGSSchema))
	if err != nil {
		b.Fatal(err)
	}
	dec, err := codec.NewDecoder(codec.JSON, sc, codec.JSONOptions{})
	if err != nil {
		b.Fatal(err)
	}
	asc, err := table.SchemaToArrowSchema(sc, nil, true, false)
	if err != nil {
		b.Fatal(err)
	}
	values := make([][]byte, len(features))
	var size int64
	for i, f := range features {
		values[i] = []byte(f)
		size += int64(len(f))
	}
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		rb := array.NewRecordBuilder(memory.DefaultAllocator, asc)
		cols := rb.Fields()[1:]
		for _, v := range values {
			if err := dec.Decode(v); err != nil {
				b.Fatal(err)
			}
			dec.Append(cols)
		}
		rb.Release()
	}
	b.ReportMetric(float64(len(values)*b.N)/b.Elapsed().Seconds(), "records/s")
}
