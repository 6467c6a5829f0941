// Package flights reads the shared data set of 3 million flight records
// (flights-3m.parquet) as the JSON values the benchmarks and performance
// tests produce to Kafka: one definition of the records, their table
// schema and their JSON form.
package flights

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// File is the shared data set of 3 million flight records.
const File = "flights-3m.parquet"

// Schema is the Iceberg schema (spec JSON form) of a json table of
// the flight records as JSON writes them.
const Schema = `{"type":"struct","schema-id":0,"fields":[
 {"id":1,"name":"date","required":false,"type":"timestamptz"},
 {"id":2,"name":"delay","required":false,"type":"long"},
 {"id":3,"name":"distance","required":false,"type":"long"},
 {"id":4,"name":"origin","required":false,"type":"string"},
 {"id":5,"name":"destination","required":false,"type":"string"}]}`

// JSON reads up to limit rows (0 = all) of the flights Parquet file
// and returns each as one JSON object, e.g.
// {"date":"2001-01-01T00:01:00Z","delay":33,"distance":2176,"origin":"LAS","destination":"PHL"}.
// The conversion is deterministic (same bytes every run).
func JSON(path string, limit int) ([][]byte, error) {
	var out [][]byte
	n := limit
	err := batches(path, 64<<10, func(rows int64) {
		if n <= 0 || int64(n) > rows {
			n = int(rows)
		}
		out = make([][]byte, 0, n)
	}, func(rec arrow.RecordBatch) bool {
		return appendJSON(&out, rec, n)
	})
	return out, err
}

// FirstBatch returns the first batch of up to rows rows of the flights
// Parquet file at path, as arrow-go reads it (columns date timestamp[us],
// delay and distance int64, origin and destination large_string). The
// caller releases it.
func FirstBatch(path string, rows int64) (arrow.RecordBatch, error) {
	var first arrow.RecordBatch
	err := batches(path, rows, nil, func(rec arrow.RecordBatch) bool {
		rec.Retain()
		first = rec
		return false
	})
	if err == nil && first == nil {
		err = fmt.Errorf("flights: %s holds no rows", path)
	}
	return first, err
}

// batches reads the flights Parquet file at path in batches of batchSize
// rows, telling total the file's row count first, and calls fn with each
// batch until it returns false.
func batches(path string, batchSize int64, total func(rows int64), fn func(arrow.RecordBatch) bool) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	pr, err := file.NewParquetReader(f)
	if err != nil {
		return fmt.Errorf("flights: %w", err)
	}
	defer pr.Close()
	fr, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{BatchSize: batchSize}, memory.DefaultAllocator)
	if err != nil {
		return fmt.Errorf("flights: %w", err)
	}
	rr, err := fr.GetRecordReader(context.Background(), nil, nil)
	if err != nil {
		return fmt.Errorf("flights: %w", err)
	}
	defer rr.Release()
	if total != nil {
		total(pr.NumRows())
	}
	for rr.Next() {
		if !fn(rr.RecordBatch()) {
			return nil
		}
	}
	return rr.Err()
}

// appendJSON appends the rows of rec to *out as JSON values until it holds
// n; it reports whether it wants more.
func appendJSON(out *[][]byte, rec arrow.RecordBatch, n int) bool {
	date := rec.Column(0).(*array.Timestamp)
	delay := rec.Column(1).(*array.Int64)
	dist := rec.Column(2).(*array.Int64)
	orig := rec.Column(3).(*array.LargeString)
	dest := rec.Column(4).(*array.LargeString)
	for i := 0; i < int(rec.NumRows()) && len(*out) < n; i++ {
		b := make([]byte, 0, 112)
		b = append(b, `{"date":`...)
		if date.IsNull(i) {
			b = append(b, "null"...)
		} else {
			b = strconv.AppendQuote(b, time.UnixMicro(int64(date.Value(i))).UTC().Format(time.RFC3339Nano))
		}
		b = appendInt(append(b, `,"delay":`...), delay, i)
		b = appendInt(append(b, `,"distance":`...), dist, i)
		b = appendStr(append(b, `,"origin":`...), orig, i)
		b = appendStr(append(b, `,"destination":`...), dest, i)
		*out = append(*out, append(b, '}'))
	}
	return len(*out) < n
}

func appendInt(b []byte, a *array.Int64, i int) []byte {
	if a.IsNull(i) {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, a.Value(i), 10)
}

func appendStr(b []byte, a *array.LargeString, i int) []byte {
	if a.IsNull(i) {
		return append(b, "null"...)
	}
	return strconv.AppendQuote(b, a.Value(i))
}
