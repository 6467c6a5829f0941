package datafile_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/codec"
	"github.com/minkhq/mink/datafile"
	"github.com/minkhq/mink/internal/flights"
	"github.com/minkhq/mink/internal/shareddata"
)

// flightsRange returns the records of the first 16 MiB range of partition
// 0 of the bench's indexing topic (bench/indexing.go idxChunks): the flight
// records as bench.flightsJSON writes them, every 4th, offsets from 0, no
// key, one timestamp. It skips when the flight records are absent.
var flightsRange = sync.OnceValues(func() ([]*kgo.Record, error) {
	path, ok := shareddata.Find(flights.File)
	if !ok {
		return nil, os.ErrNotExist
	}
	// Every 4th row until 16 MiB: about 730,000 rows are enough.
	values, err := flights.JSON(path, 1_000_000)
	if err != nil {
		return nil, err
	}
	ts := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var recs []*kgo.Record
	size := 0
	for row := 0; row < len(values) && size < 16<<20; row += 4 {
		size += len(values[row])
		recs = append(recs, &kgo.Record{Topic: "flights", Offset: int64(len(recs)), Timestamp: ts, Value: values[row]})
	}
	return recs, nil
})

func flightsRangeOf(tb testing.TB) []*kgo.Record {
	recs, err := flightsRange()
	if os.IsNotExist(err) {
		tb.Skip("flight records absent:", err)
	}
	if err != nil {
		tb.Fatal(err)
	}
	return recs
}

// flightsDigest is a SHA-256 of everything a build of res gives the
// indexer: the data file's bytes, its statistics (as stored, JSON) and its
// sketches (as stored).
func flightsDigest(tb testing.TB, res *datafile.Result) string {
	tb.Helper()
	h := sha256.New()
	h.Write(res.Data.Bytes)
	st, err := json.Marshal(res.Data.Stats)
	if err != nil {
		tb.Fatal(err)
	}
	h.Write(st)
	sk, err := res.Data.Sketches.MarshalBinary()
	if err != nil {
		tb.Fatal(err)
	}
	h.Write(sk)
	return hex.EncodeToString(h.Sum(nil))
}

// TestFlightsRangeDigest pins the whole result of building a 16 MiB range
// of the flight records (file bytes, statistics, sketches) for raw and
// json tables: the golden vectors at the size the indexer builds, with
// dictionaries, several pages and a range of values. Skipped when the flight
// records are absent.
func TestFlightsRangeDigest(t *testing.T) {
	recs := flightsRangeOf(t)
	for _, c := range []struct {
		value  codec.Format
		schema string
		want   string
	}{
		{codec.Raw, "", "04261097b681795402881d6e82cff454aec149324fd959e62732dd8f33885f34"},
		{codec.JSON, flights.Schema, "f505079cf8d80b5a696793c666c58493899aae653db8614695dd850e1cedcf8a"},
	} {
		t.Run(string(c.value), func(t *testing.T) {
			res, err := datafile.Build(specFromJSON(t, codec.Raw, c.value, c.schema), recs)
			if err != nil {
				t.Fatal(err)
			}
			if res.DLQ != nil {
				t.Fatalf("%d dead letters", res.DLQ.Stats.RecordCount)
			}
			if got := flightsDigest(t, res); got != c.want {
				t.Errorf("%d records: digest %s, want %s (bump EncoderVersion if the file bytes changed)", len(recs), got, c.want)
			}
		})
	}
}

// cpuTime is the CPU time (user + system) the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkFlightsRange measures, per record and in process CPU time (not
// wall time: the machine may be shared), Mink's encoder (datafile.Build)
// and the bare Parquet encode of the same rows (pqarrow, the encoder's
// settings, the Build's file read back) on one 16 MiB range of the flight
// records, as the bench's indexing scenario compares them.
func BenchmarkFlightsRange(b *testing.B) {
	recs := flightsRangeOf(b)
	for _, c := range []struct {
		value  codec.Format
		schema string
	}{{codec.Raw, ""}, {codec.JSON, flights.Schema}} {
		s := specFromJSON(b, codec.Raw, c.value, c.schema)
		res, err := datafile.Build(s, recs)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(string(c.value)+"/build", func(b *testing.B) {
			b.ReportAllocs()
			c0 := cpuTime()
			for b.Loop() {
				if _, err := datafile.Build(s, recs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cpuTime()-c0).Nanoseconds())/float64(b.N*len(recs)), "cpu-ns/record")
		})
		b.Run(string(c.value)+"/bare", func(b *testing.B) {
			tbl, err := pqarrow.ReadTable(context.Background(), bytes.NewReader(res.Data.Bytes), nil, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
			if err != nil {
				b.Fatal(err)
			}
			defer tbl.Release()
			b.ReportAllocs()
			c0 := cpuTime()
			for b.Loop() {
				if _, err := bareEncode(tbl); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cpuTime()-c0).Nanoseconds())/float64(b.N*len(recs)), "cpu-ns/record")
		})
	}
}

// bareEncode is bench's idxEncode: t as one Parquet file with the
// encoder's settings.
func bareEncode(t arrow.Table) ([]byte, error) {
	mem := memory.NewGoAllocator()
	props, err := datafile.WriterProperties(mem, t.Schema())
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(t.Schema(), &buf, props, datafile.ArrowWriterProperties(mem))
	if err != nil {
		return nil, err
	}
	if err := w.WriteTable(t, 1<<20); err != nil {
		_ = w.Close()
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
