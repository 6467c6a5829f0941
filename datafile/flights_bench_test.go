package datafile_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/codec"
	"github.com/minkhq/mink/datafile"
	"github.com/minkhq/mink/internal/flights"
	"github.com/minkhq/mink/internal/shareddata"
)

// flightRecords returns the first flight records as JSON values, up to
// maxBytes of values (a range of the indexer's default size is 16 MiB).
func flightRecords(b *testing.B, maxBytes int) []*kgo.Record {
	path, ok := shareddata.Find(flights.File)
	if !ok {
		b.Skip("flight records absent: " + flights.File)
	}
	values, err := flights.JSON(path, maxBytes/64)
	if err != nil {
		b.Fatal(err)
	}
	var recs []*kgo.Record
	size := 0
	for _, v := range values {
		if size >= maxBytes {
			break
		}
		size += len(v)
		recs = append(recs, &kgo.Record{Offset: int64(len(recs)), Timestamp: time.UnixMilli(1700000000000 + int64(len(recs))),
			Key: []byte(strconv.Itoa(len(recs))), Value: v})
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
