package main

import (
	"context"
	"fmt"
	"os"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/hamba/avro/v2"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/minkhq/mink/codec/wire"
)

// FlightsAvro is the Avro schema (.avsc) of the flight records: the
// columns of FlightsSchema, each optional (a ["null", T] union), the date
// a timestamp-micros (Iceberg timestamptz, docs/formats-avro.md).
const FlightsAvro = `{"type":"record","name":"Flight","namespace":"bench","fields":[
 {"name":"date","type":["null",{"type":"long","logicalType":"timestamp-micros"}]},
 {"name":"delay","type":["null","long"]},
 {"name":"distance","type":["null","long"]},
 {"name":"origin","type":["null","string"]},
 {"name":"destination","type":["null","string"]}]}`

// FlightsProto is the Protobuf schema (.proto) of the flight records: the
// columns of FlightsSchema, each with explicit presence (optional, absent
// = null), the date a google.protobuf.Timestamp (Iceberg timestamptz,
// docs/formats-protobuf.md).
const FlightsProto = `syntax = "proto3";
package bench;
import "google/protobuf/timestamp.proto";
message Flight {
  google.protobuf.Timestamp date = 1;
  optional int64 delay = 2;
  optional int64 distance = 3;
  optional string origin = 4;
  optional string destination = 5;
}
`

// flightAvro is one flight as hamba/avro encodes it with FlightsAvro: a
// nil pointer is the union's null branch. Date is in microseconds since
// the Unix epoch (hamba/avro writes an int64 as the long as it is).
type flightAvro struct {
	Date        *int64  `avro:"date"`
	Delay       *int64  `avro:"delay"`
	Distance    *int64  `avro:"distance"`
	Origin      *string `avro:"origin"`
	Destination *string `avro:"destination"`
}

// flightsRegistry reads up to limit rows (0 = all) of the flights Parquet
// file, the rows flightsJSON reads in the same order, and returns each in
// the Confluent wire format: in Avro (FlightsAvro, by hamba/avro) after
// the header of schema avroID, and in Protobuf (FlightsProto, by
// protowire) after the header of schema protoID with message indexes [0].
// The values of each format share one backing array.
func flightsRegistry(path string, limit, avroID, protoID int) (avroValues, protoValues [][]byte, err error) {
	schema, err := avro.ParseWithCache(FlightsAvro, "", &avro.SchemaCache{})
	if err != nil {
		return nil, nil, fmt.Errorf("flights: avro schema: %w", err)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	pr, err := file.NewParquetReader(f)
	if err != nil {
		return nil, nil, fmt.Errorf("flights: %w", err)
	}
	defer pr.Close()
	fr, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{BatchSize: 64 << 10}, memory.DefaultAllocator)
	if err != nil {
		return nil, nil, fmt.Errorf("flights: %w", err)
	}
	rr, err := fr.GetRecordReader(context.Background(), nil, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("flights: %w", err)
	}
	defer rr.Release()
	n := int(pr.NumRows())
	if limit > 0 && limit < n {
		n = limit
	}
	avroHeader := wire.AppendHeader(nil, avroID, nil)
	protoHeader := wire.AppendHeader(nil, protoID, []int{0})
	var avroBuf, protoBuf []byte
	avroEnds, protoEnds := make([]int, 0, n), make([]int, 0, n)
	rows := 0
	for rr.Next() && rows < n {
		rec := rr.RecordBatch()
		date := rec.Column(0).(*array.Timestamp)
		delay := rec.Column(1).(*array.Int64)
		dist := rec.Column(2).(*array.Int64)
		orig := rec.Column(3).(*array.LargeString)
		dest := rec.Column(4).(*array.LargeString)
		for i := 0; i < int(rec.NumRows()) && rows < n; i++ {
			var fl flightAvro
			if !date.IsNull(i) {
				us := int64(date.Value(i))
				fl.Date = &us
			}
			fl.Delay, fl.Distance = int64At(delay, i), int64At(dist, i)
			fl.Origin, fl.Destination = stringAt(orig, i), stringAt(dest, i)

			b, err := avro.Marshal(schema, &fl)
			if err != nil {
				return nil, nil, fmt.Errorf("flights: row %d: avro: %w", rows, err)
			}
			avroBuf = append(append(avroBuf, avroHeader...), b...)
			avroEnds = append(avroEnds, len(avroBuf))

			protoBuf = appendFlightProto(append(protoBuf, protoHeader...), &fl)
			protoEnds = append(protoEnds, len(protoBuf))
			rows++
		}
	}
	if err := rr.Err(); err != nil {
		return nil, nil, fmt.Errorf("flights: %w", err)
	}
	return split(avroBuf, avroEnds), split(protoBuf, protoEnds), nil
}

// appendFlightProto appends fl as a FlightsProto Flight message (Protobuf
// spec, "Encoding"): a field with presence is written when set, even when
// zero; a Timestamp's seconds and nanos are implicit-presence fields,
// written when not zero, with nanos in [0, 999999999] (the floor of the
// microseconds, so a date before 1970 is exact too).
func appendFlightProto(b []byte, fl *flightAvro) []byte {
	if fl.Date != nil {
		us := *fl.Date
		sec, rem := us/1e6, us%1e6
		if rem < 0 {
			sec, rem = sec-1, rem+1e6
		}
		var ts []byte
		if sec != 0 {
			ts = protowire.AppendVarint(protowire.AppendTag(ts, 1, protowire.VarintType), uint64(sec))
		}
		if rem != 0 {
			ts = protowire.AppendVarint(protowire.AppendTag(ts, 2, protowire.VarintType), uint64(rem*1000))
		}
		b = protowire.AppendBytes(protowire.AppendTag(b, 1, protowire.BytesType), ts)
	}
	for _, f := range []struct {
		num protowire.Number
		v   *int64
	}{{2, fl.Delay}, {3, fl.Distance}} {
		if f.v != nil {
			b = protowire.AppendVarint(protowire.AppendTag(b, f.num, protowire.VarintType), uint64(*f.v))
		}
	}
	for _, f := range []struct {
		num protowire.Number
		v   *string
	}{{4, fl.Origin}, {5, fl.Destination}} {
		if f.v != nil {
			b = protowire.AppendString(protowire.AppendTag(b, f.num, protowire.BytesType), *f.v)
		}
	}
	return b
}

func int64At(a *array.Int64, i int) *int64 {
	if a.IsNull(i) {
		return nil
	}
	v := a.Value(i)
	return &v
}

func stringAt(a *array.LargeString, i int) *string {
	if a.IsNull(i) {
		return nil
	}
	v := a.Value(i)
	return &v
}

// split cuts buf at ends into values (capacity capped, so that appending
// to one never overwrites the next).
func split(buf []byte, ends []int) [][]byte {
	out := make([][]byte, len(ends))
	start := 0
	for i, e := range ends {
		out[i] = buf[start:e:e]
		start = e
	}
	return out
}
