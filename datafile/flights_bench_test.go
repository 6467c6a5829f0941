package datafile_test

import (
	"context"
	"encoding/json"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/codec"
	"github.com/minkhq/mink/datafile"
	"github.com/minkhq/mink/internal/flights"
)

const flightsPath = "/work/shared/data/flights-3m.parquet"

// flightRecords returns the first flight records as JSON values, up to
// maxBytes of values (a range of the indexer's default size is 16 MiB).
func flightRecords(b *testing.B, maxBytes int) []*kgo.Record {
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
	fr, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{BatchSize: 1 << 16}, memory.DefaultAllocator)
	if err != nil {
		b.Fatal(err)
	}
	rr, err := fr.GetRecordReader(context.Background(), nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer rr.Release()
	var recs []*kgo.Record
	size := 0
	for rr.Next() && size < maxBytes {
		rec := rr.RecordBatch()
		for i := 0; i < int(rec.NumRows()) && size < maxBytes; i++ {
			row := map[string]any{}
			if d := rec.Column(0).(*array.Timestamp); !d.IsNull(i) {
				row["date"] = time.UnixMicro(int64(d.Value(i))).UTC().Format(time.RFC3339Nano)
			}
			for c, name := range []string{"", "delay", "distance", "origin", "destination"} {
				if c == 0 || rec.Column(c).IsNull(i) {
					continue
				}
				switch a := rec.Column(c).(type) {
				case *array.Int64:
					row[name] = a.Value(i)
				default:
					row[name] = a.ValueStr(i)
				}
			}
			v, err := json.Marshal(row)
			if err != nil {
				b.Fatal(err)
			}
			size += len(v)
			recs = append(recs, &kgo.Record{Offset: int64(len(recs)), Timestamp: time.UnixMilli(1700000000000 + int64(len(recs))),
				Key: []byte(strconv.Itoa(len(recs))), Value: v})
		}
	}
	return recs
}

// BenchmarkBuildFlights measures Build (json) over a 16 MiB range of flight
// records, per record; sketch-bytes is the size of the file's column
// sketches as Postgres keeps them (data_files.sketches).
func BenchmarkBuildFlights(b *testing.B) {
	recs := flightRecords(b, 16<<20)
	s := specFromJSON(b, codec.String, codec.JSON, flights.Schema)
	var res *datafile.Result
	var err error
	for b.Loop() {
		if res, err = datafile.Build(s, recs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(int64(b.N)*int64(len(recs))), "ns/record")
	b.ReportMetric(float64(len(recs)), "records")
	sk, err := res.Data.Sketches.MarshalBinary()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(len(sk)), "sketch-bytes")
	b.ReportMetric(float64(len(res.Data.Bytes)), "file-bytes")
}
