package datafile_test

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/codec"
	"github.com/minkhq/mink/datafile"
	"github.com/minkhq/mink/internal/testkit"
)

const usgsPath = "/work/shared/data/usgs-earthquakes-week.geojson"

// benchValues returns the features of the USGS week feed, or synthetic
// features of the same shape when the file is absent.
func benchValues(b *testing.B) [][]byte {
	raw, err := os.ReadFile(usgsPath)
	if err == nil {
		var fc struct {
			Features []json.RawMessage `json:"features"`
		}
		if err := json.Unmarshal(raw, &fc); err != nil {
			b.Fatal(err)
		}
		out := make([][]byte, len(fc.Features))
		for i, f := range fc.Features {
			out[i] = f
		}
		return out
	}
	out := make([][]byte, 2000)
	for i := range out {
		mag := fmt.Sprintf("%d.%d", i%7, i%10)
		if i%10 == 0 {
			mag = fmt.Sprint(i % 7)
		}
		out[i] = fmt.Appendf(nil, `{"type":"Feature","properties":{"mag":%s,"place":"%d km SW of Somewhere, CA","time":%d,"updated":%d,"tz":-480,"felt":null,"tsunami":0,"sig":%d,"net":"ci","nst":%d,"dmin":0.0%d,"rms":0.%d,"gap":%d,"magType":"ml","title":"M %s - somewhere"},"geometry":{"type":"Point","coordinates":[-117.%d,35.%d,%d.5]},"id":"ci%d"}`,
			mag, i%100, 1700000000000+int64(i)*1000, 1700000000500+int64(i)*1000, i%300, i%40, i%9, i%9, i%180, mag, i, i, i%20, i)
	}
	return out
}

func benchRecords(values [][]byte) []*kgo.Record {
	recs := make([]*kgo.Record, len(values))
	for i, v := range values {
		recs[i] = &kgo.Record{
			Partition: 0,
			Offset:    int64(i),
			Timestamp: time.UnixMilli(1700000000000 + int64(i)),
			Key:       fmt.Appendf(nil, "key-%d", i),
			Value:     v,
			Headers:   []kgo.RecordHeader{{Key: "source", Value: []byte("usgs")}},
		}
	}
	return recs
}

// BenchmarkBuild measures Build end to end (decode, Arrow, Parquet,
// statistics) over the USGS week feed, one record per feature. MB/s counts
// record value bytes.
func BenchmarkBuild(b *testing.B) {
	values := benchValues(b)
	recs := benchRecords(values)
	var size int64
	for _, v := range values {
		size += int64(len(v))
	}
	for _, c := range []struct {
		name   string
		value  codec.Format
		schema string
	}{
		{"raw", codec.Raw, ""},
		{"string", codec.String, ""},
		{"json", codec.JSON, testkit.USGSSchema},
	} {
		b.Run(c.name, func(b *testing.B) {
			s := specFromJSON(b, codec.String, c.value, c.schema)
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				res, err := datafile.Build(s, recs)
				if err != nil {
					b.Fatal(err)
				}
				if res.DLQ != nil {
					b.Fatalf("%d dead letters", res.DLQ.Stats.RecordCount)
				}
			}
			b.ReportMetric(float64(len(recs)*b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

func specFromJSON(tb testing.TB, key, value codec.Format, schema string) *datafile.Spec {
	var declared *iceberg.Schema
	if schema != "" {
		declared = new(iceberg.Schema)
		if err := json.Unmarshal([]byte(schema), declared); err != nil {
			tb.Fatal(err)
		}
	}
	sc, err := codec.TableSchema(key, value, declared)
	if err != nil {
		tb.Fatal(err)
	}
	return &datafile.Spec{Schema: sc, KeyFormat: key, ValueFormat: value}
}
