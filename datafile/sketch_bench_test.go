package datafile

import (
	"context"
	"os"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
)

const flightsPath = "/work/shared/data/flights-3m.parquet"

// BenchmarkColumnSketches measures the sketches and NaN counts of a build
// alone (columnSketches), per record, over the first batch of the flight
// records (five columns: timestamptz, two longs, two strings).
func BenchmarkColumnSketches(b *testing.B) {
	f, err := os.Open(flightsPath)
	if err != nil {
		b.Skip("flight records absent:", err)
	}
	defer f.Close()
	pr, err := file.NewParquetReader(f)
	if err != nil {
		b.Fatal(err)
	}
	defer pr.Close()
	fr, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{BatchSize: 1 << 18}, memory.DefaultAllocator)
	if err != nil {
		b.Fatal(err)
	}
	rr, err := fr.GetRecordReader(context.Background(), nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer rr.Release()
	if !rr.Next() {
		b.Fatal(rr.Err())
	}
	rec := rr.RecordBatch()
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "date", Type: iceberg.PrimitiveTypes.TimestampTz},
		iceberg.NestedField{ID: 2, Name: "delay", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 3, Name: "distance", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 4, Name: "origin", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 5, Name: "destination", Type: iceberg.PrimitiveTypes.String})
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := columnSketches(sc, rec); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(int64(b.N)*rec.NumRows()), "ns/record")
}
