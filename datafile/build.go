package datafile

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/codec"
)

// Column positions inside the _kafka struct (codec.TableSchema order).
const (
	colPartition = iota
	colOffset
	colTimestamp
	colTimestampType
	colKey
	colHeaders
)

// arrowSchema converts a table schema to Arrow with PARQUET:field_id on
// every field, so that the Parquet columns carry Iceberg field ids.
func arrowSchema(sc *iceberg.Schema) (*arrow.Schema, error) {
	return table.SchemaToArrowSchema(sc, nil, true, false)
}

// pending is one Parquet file being built: its rows and the timestamp range.
type pending struct {
	schema *iceberg.Schema
	rb     *array.RecordBuilder
	cols   []array.Builder // rb's top-level builders
	k      kafkaBuilders
	rows   int
	// reserved is the rows every builder has room for (reserve): up to
	// it, fixed-width _kafka fields append without checking.
	reserved int
	minTS    int64
	maxTS    int64
}

// kafkaBuilders are the builders of the _kafka struct's fields, looked up
// once per file rather than once per record.
type kafkaBuilders struct {
	kafka             *array.StructBuilder
	partition, tsType *array.Int32Builder
	offset            *array.Int64Builder
	timestamp         *array.TimestampBuilder
	keyString         *array.StringBuilder // one of keyString, keyBinary
	keyBinary         *array.BinaryBuilder
	headers           *array.ListBuilder
	header            *array.StructBuilder
	headerKey         *array.StringBuilder
	headerValue       *array.BinaryBuilder
}

func newFile(mem memory.Allocator, sc *iceberg.Schema) (*pending, error) {
	asc, err := arrowSchema(sc)
	if err != nil {
		return nil, fmt.Errorf("datafile: arrow schema: %w", err)
	}
	rb := array.NewRecordBuilder(mem, asc)
	f := &pending{schema: sc, rb: rb, cols: rb.Fields()}
	kb := f.cols[0].(*array.StructBuilder)
	f.k = kafkaBuilders{
		kafka:     kb,
		partition: kb.FieldBuilder(colPartition).(*array.Int32Builder),
		offset:    kb.FieldBuilder(colOffset).(*array.Int64Builder),
		timestamp: kb.FieldBuilder(colTimestamp).(*array.TimestampBuilder),
		tsType:    kb.FieldBuilder(colTimestampType).(*array.Int32Builder),
		headers:   kb.FieldBuilder(colHeaders).(*array.ListBuilder),
	}
	switch b := kb.FieldBuilder(colKey).(type) {
	case *array.StringBuilder:
		f.k.keyString = b
	case *array.BinaryBuilder:
		f.k.keyBinary = b
	}
	f.k.header = f.k.headers.ValueBuilder().(*array.StructBuilder)
	f.k.headerKey = f.k.header.FieldBuilder(0).(*array.StringBuilder)
	f.k.headerValue = f.k.header.FieldBuilder(1).(*array.BinaryBuilder)
	return f, nil
}

// reserve makes room for rows records with keys of keyBytes in all.
func (f *pending) reserve(rows, keyBytes int) {
	f.rb.Reserve(rows) // the _kafka struct's fields too (StructBuilder.Reserve)
	f.reserved = f.rows + rows
	kb := f.cols[0].(*array.StructBuilder)
	switch b := kb.FieldBuilder(colKey).(type) {
	case *array.StringBuilder:
		b.ReserveData(keyBytes)
	case *array.BinaryBuilder:
		b.ReserveData(keyBytes)
	}
}

// appendKafka appends the _kafka struct of r. When sanitize is set, string
// columns that hold invalid UTF-8 (a string key, header keys) have it
// replaced by U+FFFD: that is the dead-letter file, whose rows must be
// written whatever the record holds (the raw value and the error say the
// rest).
//
// ts is the timestamp in microseconds and tsType its type (see recordTime).
func (f *pending) appendKafka(r *kgo.Record, ts int64, tsType int32, keyFormat codec.Format, sanitize bool) {
	k := &f.k
	if f.rows < f.reserved {
		// Room made by reserve: a checked Append costs a call that does
		// not inline, per field and record.
		k.kafka.UnsafeAppendBoolToBitmap(true)
		k.partition.UnsafeAppend(r.Partition)
		k.offset.UnsafeAppend(r.Offset)
		k.timestamp.UnsafeAppend(arrow.Timestamp(ts))
		k.tsType.UnsafeAppend(tsType)
	} else {
		k.kafka.Append(true)
		k.partition.Append(r.Partition)
		k.offset.Append(r.Offset)
		k.timestamp.Append(arrow.Timestamp(ts))
		k.tsType.Append(tsType)
	}
	if b := k.keyString; b != nil {
		switch {
		case r.Key == nil:
			b.AppendNull()
		case sanitize && !utf8.Valid(r.Key):
			b.Append(strings.ToValidUTF8(string(r.Key), "\uFFFD"))
		default:
			b.BinaryBuilder.Append(r.Key)
		}
	} else if b := k.keyBinary; b != nil {
		if r.Key == nil {
			b.AppendNull()
		} else {
			b.Append(r.Key)
		}
	}
	// A record without headers has an empty list: Kafka has no null
	// headers.
	k.headers.Append(true)
	hs, hk, hv := k.header, k.headerKey, k.headerValue
	for _, h := range r.Headers {
		hs.Append(true)
		if sanitize && !utf8.ValidString(h.Key) {
			hk.Append(strings.ToValidUTF8(h.Key, "\uFFFD"))
		} else {
			hk.Append(h.Key)
		}
		if h.Value == nil {
			hv.AppendNull()
		} else {
			hv.Append(h.Value)
		}
	}
	if f.rows == 0 || ts < f.minTS {
		f.minTS = ts
	}
	if f.rows == 0 || ts > f.maxTS {
		f.maxTS = ts
	}
	f.rows++
}

// finish writes the file's rows as Parquet, or returns nil when it has
// none.
func (f *pending) finish(mem memory.Allocator, partition int32) (*File, error) {
	defer f.rb.Release()
	if f.rows == 0 {
		return nil, nil
	}
	rec := f.rb.NewRecordBatch()
	defer rec.Release()
	b, meta, err := writeParquet(mem, rec)
	if err != nil {
		return nil, err
	}
	st, err := fileStats(f.schema, meta, len(b), partition)
	if err != nil {
		return nil, err
	}
	if st.RecordCount != int64(f.rows) {
		return nil, fmt.Errorf("datafile: footer counts %d rows, built %d", st.RecordCount, f.rows)
	}
	st.MinTimestamp, st.MaxTimestamp = f.minTS, f.maxTS
	sk, nans, err := columnSketches(f.schema, rec)
	if err != nil {
		return nil, err
	}
	// Parquet footers do not count NaN: the build does.
	if len(nans) > 0 {
		if st.NaNValueCounts == nil {
			st.NaNValueCounts = map[int]int64{}
		}
		maps.Copy(st.NaNValueCounts, nans)
	}
	return &File{Bytes: b, SHA256: sha256.Sum256(b), Stats: st, Sketches: sk}, nil
}

// Bounds of a record timestamp, in milliseconds, that Iceberg's timestamptz
// (int64 microseconds since the Unix epoch, Iceberg spec, "Primitive Types")
// holds: ms*1000 must fit an int64.
const (
	MinMillis = math.MinInt64 / 1000 // -9223372036854775 ms, -290308-12-21T19:59:05.225Z
	MaxMillis = math.MaxInt64 / 1000 // 9223372036854775 ms, 294247-01-10T04:00:54.775Z
)

// Kafka's "no timestamp": the timestamp type (NO_TIMESTAMP_TYPE) and
// timestamp (RecordBatch.NO_TIMESTAMP, ms) of a record without one.
const (
	noTimestampType = -1
	noTimestamp     = -1 // ms, Kafka's RecordBatch.NO_TIMESTAMP
)

// recordTime returns the _kafka.timestamp (microseconds) and
// _kafka.timestamp_type of r. r.Timestamp holds the record's raw
// millisecond timestamp (kafka.ReadRange and kafka.Reader set it exactly).
// A timestamp Iceberg cannot hold returns an error naming the raw value,
// with Kafka's "no timestamp" pair (-1 ms, type -1) for the dead-letter
// row: never a wrapped or clamped instant.
func recordTime(r *kgo.Record) (us int64, tsType int32, err error) {
	ms := r.Timestamp.UnixMilli()
	tsType = int32(r.Attrs.TimestampType())
	if ms < MinMillis || ms > MaxMillis {
		return noTimestamp * 1000, noTimestampType, fmt.Errorf(
			"timestamp %d ms (timestamp type %d) is outside what an Iceberg timestamptz holds (int64 microseconds: %d..%d ms)",
			ms, tsType, int64(MinMillis), int64(MaxMillis))
	}
	return ms * 1000, tsType, nil
}

// checkRecord reports why the key or headers of r cannot be decoded.
func checkRecord(keyFormat codec.Format, r *kgo.Record) error {
	if err := codec.CheckKey(keyFormat, r.Key); err != nil {
		return err
	}
	for i, h := range r.Headers {
		if !utf8.ValidString(h.Key) {
			return fmt.Errorf("header %d: key is not valid UTF-8", i)
		}
	}
	return nil
}

func build(spec *Spec, records []*kgo.Record) (*Result, error) {
	if spec == nil || spec.Schema == nil {
		return nil, errors.New("datafile: spec without a schema")
	}
	if err := codec.CheckKey(spec.KeyFormat, nil); err != nil {
		return nil, fmt.Errorf("datafile: %w", err)
	}
	// One pass checks the records and adds up their keys and values (the
	// binary column data reserved below): a range's records do not fit
	// in the CPU caches, and each pass over them costs their loads.
	var keyBytes, valueBytes int
	for i, r := range records {
		if r == nil {
			return nil, fmt.Errorf("datafile: record %d is nil", i)
		}
		keyBytes += len(r.Key)
		valueBytes += len(r.Value)
		if i > 0 {
			if r.Partition != records[0].Partition {
				return nil, fmt.Errorf("datafile: record at offset %d is in partition %d, want %d", r.Offset, r.Partition, records[0].Partition)
			}
			if r.Offset <= records[i-1].Offset {
				return nil, fmt.Errorf("datafile: offset %d follows offset %d: records must be in increasing offset order", r.Offset, records[i-1].Offset)
			}
		}
	}
	res := &Result{}
	if len(records) == 0 {
		return res, nil
	}
	dec, err := codec.NewDecoderConfig(spec.Schema, codec.DecoderConfig{Format: spec.ValueFormat, KeyFormat: spec.KeyFormat,
		JSON: spec.JSON, Writers: spec.Writers})
	if err != nil {
		return nil, fmt.Errorf("datafile: %w", err)
	}
	// A registry key format is decoded into the key column after _kafka.
	var keyDec *codec.Decoder
	if spec.KeyFormat.Registry() {
		if keyDec, err = codec.NewDecoderConfig(spec.Schema, codec.DecoderConfig{Format: spec.KeyFormat, KeyFormat: spec.KeyFormat,
			Key: true, Writers: spec.Writers}); err != nil {
			return nil, fmt.Errorf("datafile: %w", err)
		}
	}
	valueCol := 1 + codec.KeyColumns(spec.KeyFormat)
	var mem memory.Allocator = buildMem
	data, err := newFile(mem, spec.Schema)
	if err != nil {
		return nil, err
	}
	if len(data.cols) != valueCol+dec.Columns() {
		data.rb.Release()
		return nil, fmt.Errorf("datafile: schema has %d columns, decoders fill %d", len(data.cols), valueCol+dec.Columns())
	}
	// Reserve the binary column data up front: growing it by doubling
	// costs copies and zeroing.
	data.reserve(len(records), keyBytes)
	var first array.Builder // none: a Protobuf message without fields
	if valueCol < len(data.cols) {
		first = data.cols[valueCol]
	}
	switch b := first.(type) {
	case *array.BinaryBuilder:
		b.ReserveData(valueBytes)
	case *array.StringBuilder:
		b.ReserveData(valueBytes)
	}
	var dlq *pending
	var unknown unknownTally
	for _, r := range records {
		ts, tsType, reason := recordTime(r)
		if reason == nil {
			reason = checkRecord(spec.KeyFormat, r)
		}
		if reason == nil && keyDec != nil {
			reason = keyDec.Decode(r.Key)
		}
		if reason == nil {
			reason = dec.Decode(r.Value)
			unknown.add(res, dec)
		}
		if reason == nil {
			data.appendKafka(r, ts, tsType, spec.KeyFormat, false)
			if keyDec != nil {
				keyDec.Append(data.cols[1:2])
			}
			dec.Append(data.cols[valueCol:])
			continue
		}
		if dlq == nil {
			if dlq, err = newFile(mem, codec.DLQSchema(spec.KeyFormat)); err != nil {
				data.rb.Release()
				return nil, err
			}
		}
		dlq.appendKafka(r, ts, tsType, spec.KeyFormat, true)
		if r.Value == nil {
			dlq.cols[1].AppendNull()
		} else {
			dlq.cols[1].(*array.BinaryBuilder).Append(r.Value)
		}
		dlq.cols[2].(*array.StringBuilder).Append(strings.ToValidUTF8(reason.Error(), "\uFFFD"))
	}
	partition := records[0].Partition
	if res.Data, err = data.finish(mem, partition); err != nil {
		if dlq != nil {
			dlq.rb.Release()
		}
		return nil, err
	}
	if dlq != nil {
		if res.DLQ, err = dlq.finish(mem, partition); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// unknownTally counts a range's unknown JSON fields into a Result and
// keeps the first distinct paths as examples.
type unknownTally struct {
	seen map[string]bool // paths as decoded, while examples are kept
}

// add counts the unknown fields of the record dec last decoded, and adds
// their paths to res.UnknownExamples while there is room. Known paths cost
// no allocation: most ranges repeat a few.
func (u *unknownTally) add(res *Result, dec *codec.Decoder) {
	n := dec.Unknown()
	if n == 0 {
		return
	}
	res.Unknown += int64(n)
	if len(res.UnknownExamples) == MaxUnknownExamples {
		return
	}
	for _, p := range dec.UnknownPaths() {
		if u.seen[string(p)] {
			continue
		}
		if u.seen == nil {
			u.seen = make(map[string]bool)
		}
		u.seen[string(p)] = true
		if name := exampleName(p); !slices.Contains(res.UnknownExamples, name) {
			res.UnknownExamples = append(res.UnknownExamples, name)
			if len(res.UnknownExamples) == MaxUnknownExamples {
				return
			}
		}
	}
}

// maxExampleName bounds the bytes of one unknown field example.
const maxExampleName = 200

// exampleName makes an unknown field path fit for display and for
// PostgreSQL text (which cannot hold NUL): control characters become
// U+FFFD, and a path longer than maxExampleName bytes is cut, ending in "…".
func exampleName(path []byte) string {
	s := strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return utf8.RuneError
		}
		return r
	}, string(path))
	if len(s) > maxExampleName {
		n := maxExampleName
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n] + "…"
	}
	return s
}
