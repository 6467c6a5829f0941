package avro_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/minkhq/mink/codec"
	"github.com/minkhq/mink/codec/avro"
	"github.com/minkhq/mink/devenv"
)

// flightSchema is the Avro schema of the flight records, with the columns
// of bench/flights.go's json table (FlightsSchema).
const flightSchema = `{"type":"record","name":"Flight","namespace":"bench","fields":[
 {"name":"date","type":["null",{"type":"long","logicalType":"timestamp-micros"}]},
 {"name":"delay","type":["null","long"]},
 {"name":"distance","type":["null","long"]},
 {"name":"origin","type":["null","string"]},
 {"name":"destination","type":["null","string"]}]}`

const benchRows = 100_000

// flights returns the first n flight records as Avro payloads
// and as the JSON values bench/flights.go produces.
func flights(b testing.TB, n int) (avroValues, jsonValues [][]byte) {
	path, ok := devenv.FindData("flights-3m.parquet")
	if !ok {
		b.Skip("flights-3m.parquet absent (set MINK_DATA_DIR)")
	}
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	pr, err := file.NewParquetReader(f)
	if err != nil {
		b.Fatal(err)
	}
	fr, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{BatchSize: 64 << 10}, memory.DefaultAllocator)
	if err != nil {
		b.Fatal(err)
	}
	rr, err := fr.GetRecordReader(context.Background(), nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer rr.Release()
	for rr.Next() && len(avroValues) < n {
		rec := rr.RecordBatch()
		date := rec.Column(0).(*array.Timestamp)
		delay := rec.Column(1).(*array.Int64)
		dist := rec.Column(2).(*array.Int64)
		orig := rec.Column(3).(*array.LargeString)
		dest := rec.Column(4).(*array.LargeString)
		for i := 0; i < int(rec.NumRows()) && len(avroValues) < n; i++ {
			var a []byte
			j := []byte(`{"date":`)
			if date.IsNull(i) {
				a, j = zz(a, 0), append(j, "null"...)
			} else {
				a = zz(a, 1, int64(date.Value(i)))
				j = strconv.AppendQuote(j, time.UnixMicro(int64(date.Value(i))).UTC().Format(time.RFC3339Nano))
			}
			for k, col := range []*array.Int64{delay, dist} {
				j = append(j, [...]string{`,"delay":`, `,"distance":`}[k]...)
				if col.IsNull(i) {
					a, j = zz(a, 0), append(j, "null"...)
				} else {
					a, j = zz(a, 1, col.Value(i)), strconv.AppendInt(j, col.Value(i), 10)
				}
			}
			for k, col := range []*array.LargeString{orig, dest} {
				j = append(j, [...]string{`,"origin":`, `,"destination":`}[k]...)
				if col.IsNull(i) {
					a, j = zz(a, 0), append(j, "null"...)
				} else {
					a = append(zz(a, 1, int64(len(col.Value(i)))), col.Value(i)...)
					j = strconv.AppendQuote(j, col.Value(i))
				}
			}
			avroValues, jsonValues = append(avroValues, a), append(jsonValues, append(j, '}'))
		}
	}
	return avroValues, jsonValues
}

// BenchmarkDecode measures Decode and Append into Arrow builders of the
// flight records, Avro next to the json decoder on the same rows. MB/s
// counts payload bytes: Avro's are about a third of JSON's, so compare
// records/s too.
func BenchmarkDecode(b *testing.B) {
	avroValues, jsonValues := flights(b, benchRows)
	s := avroSchema(flightSchema)
	typ, err := avro.Convert(s)
	if err != nil {
		b.Fatal(err)
	}
	adec, err := avro.NewDecoder(s, typ)
	if err != nil {
		b.Fatal(err)
	}
	sc, err := codec.TableSchema(codec.Raw, codec.JSON, iceberg.NewSchema(0, typ.(*iceberg.StructType).FieldList...))
	if err != nil {
		b.Fatal(err)
	}
	jdec, err := codec.NewDecoder(codec.JSON, sc, codec.JSONOptions{})
	if err != nil {
		b.Fatal(err)
	}
	asc, err := table.SchemaToArrowSchema(sc, nil, true, false)
	if err != nil {
		b.Fatal(err)
	}
	run := func(b *testing.B, values [][]byte, decode func([]byte) error, appendTo func([]array.Builder)) {
		var size int64
		for _, v := range values {
			size += int64(len(v))
		}
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			rb := array.NewRecordBuilder(memory.DefaultAllocator, asc)
			cols := rb.Fields()[1:] // after _kafka
			for _, v := range values {
				if err := decode(v); err != nil {
					b.Fatal(err)
				}
				appendTo(cols)
			}
			rb.Release()
		}
		b.ReportMetric(float64(len(values)*b.N)/b.Elapsed().Seconds(), "records/s")
		b.ReportMetric(float64(size)/float64(len(values)), "B/record")
	}
	b.Run("avro", func(b *testing.B) { run(b, avroValues, adec.Decode, adec.Append) })
	b.Run("json", func(b *testing.B) { run(b, jsonValues, jdec.Decode, jdec.Append) })
}

// TestFlightsEqual: the Avro and JSON forms of the first flight records
// build equal Arrow columns, so the benchmark compares like with like.
func TestFlightsEqual(t *testing.T) {
	avroValues, jsonValues := flights(t, 5000)
	s := avroSchema(flightSchema)
	typ, err := avro.Convert(s)
	if err != nil {
		t.Fatal(err)
	}
	adec, err := avro.NewDecoder(s, typ)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := codec.TableSchema(codec.Raw, codec.JSON, iceberg.NewSchema(0, typ.(*iceberg.StructType).FieldList...))
	if err != nil {
		t.Fatal(err)
	}
	jdec, err := codec.NewDecoder(codec.JSON, sc, codec.JSONOptions{})
	if err != nil {
		t.Fatal(err)
	}
	asc, err := table.SchemaToArrowSchema(sc, nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	build := func(values [][]byte, decode func([]byte) error, appendTo func([]array.Builder)) arrow.RecordBatch {
		rb := array.NewRecordBuilder(memory.DefaultAllocator, asc)
		defer rb.Release()
		for _, v := range values {
			if err := decode(v); err != nil {
				t.Fatal(err)
			}
			appendTo(rb.Fields()[1:])
			rb.Field(0).AppendNull()
		}
		return rb.NewRecordBatch()
	}
	ra, rj := build(avroValues, adec.Decode, adec.Append), build(jsonValues, jdec.Decode, jdec.Append)
	defer ra.Release()
	defer rj.Release()
	nulls := 0
	for c := 1; c < int(ra.NumCols()); c++ {
		if !array.Equal(ra.Column(c), rj.Column(c)) {
			t.Errorf("column %s differs", ra.ColumnName(c))
		}
		nulls += ra.Column(c).NullN()
	}
	if ra.NumRows() != int64(len(jsonValues)) || ra.NumRows() == 0 {
		t.Fatalf("%d rows of %d", ra.NumRows(), len(jsonValues))
	}
	t.Logf("%d rows, %d nulls, equal", ra.NumRows(), nulls)
}
