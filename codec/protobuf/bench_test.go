package protobuf_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/minkhq/mink/codec"
	"github.com/minkhq/mink/codec/protobuf"
)

// flightsProto is the flight record of make bench (bench/flights.go
// FlightsSchema: date, delay, distance, origin, destination).
const flightsProto = `syntax = "proto3";
import "google/protobuf/timestamp.proto";
message Flight {
  google.protobuf.Timestamp date = 1;
  optional int64 delay = 2;
  optional int64 distance = 3;
  optional string origin = 4;
  optional string destination = 5;
}
`

// wideProto is the full 19-column flight row (nycflights13's columns).
const wideProto = `syntax = "proto3";
import "google/protobuf/timestamp.proto";
message Flight {
  google.protobuf.Timestamp time_hour = 1;
  int32 year = 2;
  int32 month = 3;
  int32 day = 4;
  optional int32 dep_time = 5;
  int32 sched_dep_time = 6;
  optional double dep_delay = 7;
  optional int32 arr_time = 8;
  int32 sched_arr_time = 9;
  optional double arr_delay = 10;
  string carrier = 11;
  int32 flight = 12;
  optional string tailnum = 13;
  string origin = 14;
  string dest = 15;
  optional double air_time = 16;
  int64 distance = 17;
  int32 hour = 18;
  int32 minute = 19;
}
`

var airports = []string{"LAS", "PHL", "JFK", "LGA", "EWR", "SFO", "ORD", "ATL", "DFW", "SEA"}

// flights returns n deterministic flight records of the given shape, as
// Protobuf payloads and as the JSON objects of the same values. Every
// 10th record has its optional values null.
func flights(n int, wide bool) (pb, js [][]byte) {
	tag := protowire.AppendTag
	vint := func(b []byte, num protowire.Number, v int64) []byte {
		return protowire.AppendVarint(tag(b, num, protowire.VarintType), uint64(v))
	}
	str := func(b []byte, num protowire.Number, s string) []byte {
		return protowire.AppendString(tag(b, num, protowire.BytesType), s)
	}
	dbl := func(b []byte, num protowire.Number, f float64) []byte {
		return protowire.AppendFixed64(tag(b, num, protowire.Fixed64Type), mathFloat64bits(f))
	}
	start := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		ts := start.Add(time.Duration(i) * 7 * time.Minute)
		null := i%10 == 9
		delay, dist := int64(i%97-20), int64(200+i%2500)
		orig, dest := airports[i%len(airports)], airports[(i/3)%len(airports)]
		date := vint(nil, 1, ts.Unix())
		var p []byte
		j := fmt.Appendf(nil, `{"%s":"%s"`, map[bool]string{false: "date", true: "time_hour"}[wide], ts.Format(time.RFC3339))
		p = protowire.AppendBytes(tag(p, 1, protowire.BytesType), date)
		if !wide {
			if !null {
				p = vint(p, 2, delay)
				p = vint(p, 3, dist)
				p = str(p, 4, orig)
				p = str(p, 5, dest)
				j = fmt.Appendf(j, `,"delay":%d,"distance":%d,"origin":"%s","destination":"%s"`, delay, dist, orig, dest)
			} else {
				j = fmt.Appendf(j, `,"delay":null,"distance":null,"origin":null,"destination":null`)
			}
		} else {
			y, m, d := ts.Date()
			p = vint(p, 2, int64(y))
			p = vint(p, 3, int64(m))
			p = vint(p, 4, int64(d))
			j = fmt.Appendf(j, `,"year":%d,"month":%d,"day":%d`, y, m, d)
			if !null {
				p = vint(p, 5, int64(ts.Hour()*100+ts.Minute()))
				j = fmt.Appendf(j, `,"dep_time":%d`, ts.Hour()*100+ts.Minute())
			}
			p = vint(p, 6, int64(ts.Hour()*100))
			j = fmt.Appendf(j, `,"sched_dep_time":%d`, ts.Hour()*100)
			if !null {
				p = dbl(p, 7, float64(delay))
				p = vint(p, 8, int64((ts.Hour()+2)%24*100))
				j = fmt.Appendf(j, `,"dep_delay":%s,"arr_time":%d`, strconv.FormatFloat(float64(delay), 'g', -1, 64), (ts.Hour()+2)%24*100)
			}
			p = vint(p, 9, int64((ts.Hour()+2)%24*100))
			j = fmt.Appendf(j, `,"sched_arr_time":%d`, (ts.Hour()+2)%24*100)
			if !null {
				p = dbl(p, 10, float64(delay)+0.5)
				j = fmt.Appendf(j, `,"arr_delay":%s`, strconv.FormatFloat(float64(delay)+0.5, 'g', -1, 64))
			}
			p = str(p, 11, "UA")
			p = vint(p, 12, int64(1000+i%3000))
			j = fmt.Appendf(j, `,"carrier":"UA","flight":%d`, 1000+i%3000)
			if !null {
				p = str(p, 13, "N"+strconv.Itoa(10000+i%5000))
				j = fmt.Appendf(j, `,"tailnum":"N%d"`, 10000+i%5000)
			}
			p = str(p, 14, orig)
			p = str(p, 15, dest)
			j = fmt.Appendf(j, `,"origin":"%s","dest":"%s"`, orig, dest)
			if !null {
				p = dbl(p, 16, float64(dist)/8)
				j = fmt.Appendf(j, `,"air_time":%s`, strconv.FormatFloat(float64(dist)/8, 'g', -1, 64))
			}
			p = vint(p, 17, dist)
			p = vint(p, 18, int64(ts.Hour()))
			p = vint(p, 19, int64(ts.Minute()))
			j = fmt.Appendf(j, `,"distance":%d,"hour":%d,"minute":%d`, dist, ts.Hour(), ts.Minute())
		}
		j = append(j, '}')
		pb, js = append(pb, p), append(js, j)
	}
	return pb, js
}

// TestFlightsMatchJSON checks the benchmark's two encodings hold the same
// values: the Protobuf decoder and the JSON decoder fill equal records.
func TestFlightsMatchJSON(t *testing.T) {
	for _, wide := range []bool{false, true} {
		text := flightsProto
		if wide {
			text = wideProto
		}
		s := schema(text)
		pb, js := flights(50, wide)
		got, err := rows(t, s, nil, nil, pb...)
		require.NoError(t, err)

		target, err := protobuf.Convert(s, nil)
		require.NoError(t, err)
		sc, err := codec.TableSchema(codec.Raw, codec.JSON, iceberg.NewSchema(0, target.(*iceberg.StructType).FieldList...))
		require.NoError(t, err)
		dec, err := codec.NewDecoder(codec.JSON, sc, codec.JSONOptions{})
		require.NoError(t, err)
		asc, err := table.SchemaToArrowSchema(iceberg.NewSchema(0, target.(*iceberg.StructType).FieldList...), nil, true, false)
		require.NoError(t, err)
		rb := array.NewRecordBuilder(memory.DefaultAllocator, asc)
		for _, v := range js {
			require.NoError(t, dec.Decode(v), string(v))
			dec.Append(rb.Fields())
		}
		rec := rb.NewRecordBatch()
		want := recordJSON(t, rec)
		rec.Release()
		rb.Release()
		require.Equal(t, want, got)
	}
}

// BenchmarkDecode measures Decode and Append into Arrow builders over
// flight records, next to the JSON decoder over the same values. MB/s
// counts payload bytes (each format's own size).
func BenchmarkDecode(b *testing.B) {
	for _, wide := range []bool{false, true} {
		name, text := "flights", flightsProto
		if wide {
			name, text = "flights-wide", wideProto
		}
		s := schema(text)
		pb, js := flights(10000, wide)
		target, err := protobuf.Convert(s, nil)
		require.NoError(b, err)
		fields := target.(*iceberg.StructType).FieldList
		asc, err := table.SchemaToArrowSchema(iceberg.NewSchema(0, fields...), nil, true, false)
		require.NoError(b, err)

		b.Run(name+"/protobuf", func(b *testing.B) {
			dec, err := protobuf.NewDecoder(s, nil, target)
			require.NoError(b, err)
			run(b, asc.Fields(), pb, dec.Decode, dec.Append)
		})
		b.Run(name+"/json", func(b *testing.B) {
			sc, err := codec.TableSchema(codec.Raw, codec.JSON, iceberg.NewSchema(0, fields...))
			require.NoError(b, err)
			dec, err := codec.NewDecoder(codec.JSON, sc, codec.JSONOptions{})
			require.NoError(b, err)
			run(b, asc.Fields(), js, dec.Decode, dec.Append)
		})
	}
}
