package kafka

import (
	"encoding/binary"
	"fmt"
	"time"
	"unsafe"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// NoTimestamp is the timestamp Kafka reports for a record that has none
// (a message of format v0): Kafka's RecordBatch.NO_TIMESTAMP, in
// milliseconds.
const NoTimestamp = -1

// decompressor is shared by every fetch: franz-go's default one is safe for
// concurrent use.
var decompressor = kgo.DefaultDecompressor()

// keepingDecompressor decompresses with franz-go's decompressor and keeps
// each output by its input, so that the raw records of a compressed batch
// can be read again without decompressing it twice.
type keepingDecompressor struct {
	// base decompresses; nil is the shared decompressor.
	base kgo.Decompressor
	out  map[rawKey][]byte
}

type rawKey struct {
	p *byte
	n int
}

func (k *keepingDecompressor) Decompress(src []byte, codec kgo.CompressionCodecType) ([]byte, error) {
	base := k.base
	if base == nil {
		base = decompressor
	}
	out, err := base.Decompress(src, codec)
	if err == nil && len(src) > 0 {
		if k.out == nil {
			k.out = make(map[rawKey][]byte)
		}
		k.out[rawKey{unsafe.SliceData(src), len(src)}] = out
	}
	return out, err
}

func (k *keepingDecompressor) get(src []byte) ([]byte, bool) {
	if len(src) == 0 {
		return nil, false
	}
	out, ok := k.out[rawKey{unsafe.SliceData(src), len(src)}]
	return out, ok
}

// rawTime is the timestamp of one record as its batch holds it.
type rawTime struct {
	offset int64
	millis int64
	// logAppend is set for the inner messages of a v1 message set whose
	// wrapper has LogAppendTime: the wrapper's timestamp and type apply
	// (as Kafka's own consumer reads them), not the inner message's.
	logAppend bool
}

// processFetch is kgo.ProcessFetchPartition with exact record timestamps.
//
// franz-go parses the records (offsets, keys, values, headers, aborted
// transactions, control records) but builds Record.Timestamp through int64
// nanoseconds (time.Unix(0, ms*1e6)), which wraps for timestamps outside
// 1677-09-21..2262-04-11. processFetch reads each returned record's
// timestamp again from the raw batch, in milliseconds as Kafka stores it
// (record batch: FirstTimestamp + the record's timestamp delta, or
// MaxTimestamp under LogAppendTime; message v1: its timestamp; message v0:
// none, NoTimestamp), and sets Record.Timestamp = time.UnixMilli(ms), which
// is exact for every int64: Record.Timestamp.UnixMilli() gives the raw value
// back. Compressed batches are decompressed once (see keepingDecompressor).
// A returned record whose raw timestamp cannot be found sets fp.Err.
func processFetch(o kgo.ProcessFetchPartitionOpts, rp *kmsg.FetchResponseTopicPartition) (kgo.FetchPartition, int64) {
	return processFetchWith(o, rp, nil)
}

// processFetchWith is processFetch decompressing with base (nil: the shared
// decompressor); a Reader's base takes its buffers from the Reader's pool
// (o.Pools).
func processFetchWith(o kgo.ProcessFetchPartitionOpts, rp *kmsg.FetchResponseTopicPartition, base kgo.Decompressor) (kgo.FetchPartition, int64) {
	dec := keepingDecompressor{base: base}
	fp, next := kgo.ProcessFetchPartition(o, rp, &dec, nil)
	if len(fp.Records) == 0 {
		return fp, next
	}
	st := stamper{recs: fp.Records}
	rawTimes(rp.RecordBatches, &dec, fp.Records[0].Offset, &st)
	if st.j < len(st.recs) {
		fp.Err = fmt.Errorf("kafka: %s/%d offset %d: the record's timestamp is not in the fetched batches",
			o.Topic, o.Partition, st.recs[st.j].Offset)
		fp.Records = nil
	}
	return fp, next
}

// stamper sets the timestamps of recs (in offset order) from the raw
// timestamps of the fetched records (a superset, in offset order).
type stamper struct {
	recs []*kgo.Record
	j    int // recs[:j] are set
}

// set is called for every raw record in log order. A record of recs that
// the raw records pass without matching stops the stamper: j then points
// at it.
func (s *stamper) set(t rawTime) {
	if s.j == len(s.recs) {
		return
	}
	r := s.recs[s.j]
	if r.Offset != t.offset {
		return // a record franz-go did not return, or r is missing (left at j)
	}
	s.j++
	r.Timestamp = time.UnixMilli(t.millis)
	if t.logAppend {
		r.Attrs = kgo.NewRecordAttrs(kgo.RecordAttrsOpts{
			Codec: kgo.CompressionCodecType(r.Attrs.CompressionType()), TimestampType: 1,
			Transactional: r.Attrs.IsTransactional(), Control: r.Attrs.IsControl(),
		})
	}
}

// rawTimes passes the offset and raw timestamp of the records of the
// record batches or message sets of a fetch response to st, in log order
// (batches that end below from are skipped). It stops where the data stops
// parsing (a truncated batch at the end of a response); franz-go returns no
// record from there either.
func rawTimes(in []byte, dec *keepingDecompressor, from int64, st *stamper) {
	for st.j < len(st.recs) {
		b, rest, ok := nextBatch(in)
		if !ok {
			break
		}
		in = rest
		switch magic := b[16]; magic {
		case 0, 1:
			ts, ok := messageTimes(b, dec)
			if !ok {
				return
			}
			for _, t := range ts {
				st.set(t)
			}
		case 2:
			var rb kmsg.RecordBatch
			if rb.ReadFrom(b) != nil {
				return
			}
			batchTimes(&rb, dec, from, st)
		default:
			return
		}
	}
}

// batchTimes appends the timestamps of the records of a v2 record batch
// (Kafka protocol, "Record Batch": a record's timestamp is FirstTimestamp
// plus its timestamp delta; under LogAppendTime every record's is
// MaxTimestamp).
func batchTimes(rb *kmsg.RecordBatch, dec *keepingDecompressor, from int64, st *stamper) {
	if rb.FirstOffset+int64(rb.LastOffsetDelta) < from {
		return // franz-go skips such a batch without decompressing it
	}
	recs := rb.Records
	if rb.Attributes&0x0007 != 0 {
		var ok bool
		if recs, ok = dec.get(recs); !ok {
			return
		}
	}
	logAppend := rb.Attributes&0x0008 != 0
	for len(recs) > 0 {
		length, n := binary.Varint(recs)
		if n <= 0 || length < 0 || length > int64(len(recs)-n) {
			break
		}
		rec := recs[n : n+int(length)]
		recs = recs[n+int(length):]
		if len(rec) < 1 {
			break
		}
		tsDelta, n1 := binary.Varint(rec[1:]) // after the attributes byte
		if n1 <= 0 {
			break
		}
		offsetDelta, n2 := binary.Varint(rec[1+n1:])
		if n2 <= 0 {
			break
		}
		ms := rb.FirstTimestamp + tsDelta
		if logAppend {
			ms = rb.MaxTimestamp
		}
		st.set(rawTime{offset: rb.FirstOffset + int64(int32(offsetDelta)), millis: ms})
	}
}

// nextBatch splits the first record batch or message off in (Kafka
// protocol: an int64 offset, an int32 length, then that many bytes, the
// magic byte at 16 in both); ok is false when in does not hold a whole
// one.
func nextBatch(in []byte) (b, rest []byte, ok bool) {
	if len(in) <= 17 {
		return nil, in, false
	}
	length := int64(int32(binary.BigEndian.Uint32(in[8:]))) + 12
	if length < 12 || int64(len(in)) < length {
		return nil, in, false
	}
	return in[:length], in[length:], true
}

// messageTimes returns the timestamps of the v0 or v1 message b (v0Times,
// v1Times); ok is false when b does not parse.
func messageTimes(b []byte, dec *keepingDecompressor) (ts []rawTime, ok bool) {
	if b[16] == 0 {
		var m kmsg.MessageV0
		if m.ReadFrom(b) != nil {
			return nil, false
		}
		return v0Times(nil, &m, dec), true
	}
	var m kmsg.MessageV1
	if m.ReadFrom(b) != nil {
		return nil, false
	}
	return v1Times(nil, &m, dec), true
}

func v0Times(out []rawTime, m *kmsg.MessageV0, dec *keepingDecompressor) []rawTime {
	if m.Attributes&0x03 == 0 {
		return append(out, rawTime{offset: m.Offset, millis: NoTimestamp})
	}
	inner, ok := dec.get(m.Value)
	if !ok {
		return out
	}
	// Inner offsets of a v0 message set are absolute.
	for {
		b, rest, ok := nextBatch(inner)
		if !ok {
			break
		}
		var im kmsg.MessageV0
		if im.ReadFrom(b) != nil {
			break
		}
		inner = rest
		out = append(out, rawTime{offset: im.Offset, millis: NoTimestamp})
	}
	return out
}

// v1Times appends the timestamps of a v1 message, or of the inner messages
// of a compressed v1 message set. Inner offsets are relative: absolute =
// wrapper offset - last inner offset + inner offset (a wrapper offset of 0
// means absolute), as franz-go and Kafka read them. Under a LogAppendTime
// wrapper, the wrapper's timestamp is every inner message's (Kafka's
// AbstractLegacyRecordBatch).
func v1Times(out []rawTime, m *kmsg.MessageV1, dec *keepingDecompressor) []rawTime {
	if m.Attributes&0x03 == 0 {
		return append(out, rawTime{offset: m.Offset, millis: m.Timestamp})
	}
	inner, ok := dec.get(m.Value)
	if !ok {
		return out
	}
	wrapperLogAppend := m.Attributes&0x08 != 0
	start := len(out)
	for {
		b, rest, ok := nextBatch(inner)
		if !ok {
			break
		}
		inner = rest
		switch b[16] {
		case 0:
			var im kmsg.MessageV0
			if im.ReadFrom(b) != nil {
				return out[:start]
			}
			out = append(out, rawTime{offset: im.Offset, millis: NoTimestamp})
		case 1:
			var im kmsg.MessageV1
			if im.ReadFrom(b) != nil {
				return out[:start]
			}
			t := rawTime{offset: im.Offset, millis: im.Timestamp}
			if wrapperLogAppend {
				t.millis, t.logAppend = m.Timestamp, true
			}
			out = append(out, t)
		default:
			return out[:start]
		}
	}
	if len(out) > start && m.Offset != 0 {
		base := m.Offset - out[len(out)-1].offset
		for i := start; i < len(out); i++ {
			out[i].offset += base
		}
	}
	return out
}
