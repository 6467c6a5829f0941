package datafile

import (
	"testing"

	"github.com/apache/iceberg-go"

	"github.com/minkhq/mink/internal/flights"
	"github.com/minkhq/mink/internal/shareddata"
)

// BenchmarkColumnSketches measures the sketches and NaN counts of a build
// alone (columnSketches), per record, over the first batch of the flight
// records (five columns: timestamptz, two longs, two strings).
func BenchmarkColumnSketches(b *testing.B) {
	path, ok := shareddata.Find(flights.File)
	if !ok {
		b.Skip("flight records absent: " + flights.File)
	}
	rec, err := flights.FirstBatch(path, 1<<18)
	if err != nil {
		b.Fatal(err)
	}
	defer rec.Release()
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
