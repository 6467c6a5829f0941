package kafka

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func gzip(t testing.TB, b []byte) []byte {
	comp, err := kgo.DefaultCompressor(kgo.GzipCompression())
	require.NoError(t, err)
	out, codec := comp.Compress(new(bytes.Buffer), b)
	require.Equal(t, kgo.CompressionCodecType(1), codec)
	return append([]byte(nil), out...)
}

// messageV0 and messageV1 encode legacy messages (Kafka message formats
// v0 and v1) with their size and CRC.
func messageV0(offset int64, attrs int8, value []byte) []byte {
	m := kmsg.MessageV0{Offset: offset, Magic: 0, Attributes: attrs, Value: value}
	return sealLegacy(m.AppendTo(nil))
}

func messageV1(offset int64, attrs int8, ts int64, value []byte) []byte {
	m := kmsg.MessageV1{Offset: offset, Magic: 1, Attributes: attrs, Timestamp: ts, Value: value}
	return sealLegacy(m.AppendTo(nil))
}

func sealLegacy(b []byte) []byte {
	binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12))
	binary.BigEndian.PutUint32(b[12:], crc32.ChecksumIEEE(b[16:]))
	return b
}

// recordBatch encodes a v2 record batch of records with the given
// timestamp deltas.
func recordBatch(t testing.TB, first int64, attrs int16, firstTS, maxTS int64, deltas ...int64) []byte {
	var raw []byte
	for i, d := range deltas {
		r := kmsg.Record{TimestampDelta64: d, OffsetDelta: int32(i), Value: bytes.Repeat([]byte("v"), 100)}
		r.Length = int32(len(r.AppendTo(nil)) - 1)
		raw = r.AppendTo(raw)
	}
	if attrs&0x07 != 0 {
		raw = gzip(t, raw)
	}
	rb := kmsg.RecordBatch{FirstOffset: first, Magic: 2, Attributes: attrs, LastOffsetDelta: int32(len(deltas) - 1),
		FirstTimestamp: firstTS, MaxTimestamp: maxTS, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1,
		NumRecords: int32(len(deltas)), Records: raw}
	rb.Length = int32(len(rb.AppendTo(nil)) - 12)
	b := rb.AppendTo(nil)
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

// TestProcessFetchTimestamps reads every way Kafka stores a timestamp,
// mixed in one fetch response as a broker may send them: a v0 message (no
// timestamp), a v1 message, compressed v1 message sets with CreateTime and
// with LogAppendTime (the wrapper's timestamp and type apply to the inner
// messages), and v2 batches with CreateTime and LogAppendTime (MaxTimestamp
// applies), compressed or not. Every value lies outside what int64
// nanoseconds hold, so franz-go's own Record.Timestamp is wrong for each.
func TestProcessFetchTimestamps(t *testing.T) {
	const y9999 = 253402300799999
	var in []byte
	in = append(in, messageV0(0, 0, []byte("a"))...)
	in = append(in, messageV1(1, 0, y9999, []byte("b"))...)
	// LogAppendTime wrapper at offset 3 holding relative offsets 0 and 1.
	inner := append(messageV1(0, 0, 5, []byte("c")), messageV1(1, 0, 6, []byte("d"))...)
	in = append(in, messageV1(3, 0x08|1, 9223372036855, gzip(t, inner))...)
	// CreateTime wrapper at offset 5; a v0 inner message has no timestamp.
	inner = append(messageV1(0, 0, -9223372036855, []byte("e")), messageV0(1, 0, []byte("f"))...)
	in = append(in, messageV1(5, 1, 7, gzip(t, inner))...)
	in = append(in, recordBatch(t, 6, 0, y9999, y9999+1, 0, 1, -y9999-1)...)
	in = append(in, recordBatch(t, 9, 1, y9999, y9999+1, 0, 1)...)
	in = append(in, recordBatch(t, 11, 0x08|1, 1, 9223372036854775, 0, 5)...)

	rp := &kmsg.FetchResponseTopicPartition{Partition: 3, HighWatermark: 13, LastStableOffset: 13, RecordBatches: in}
	fp, next := processFetch(kgo.ProcessFetchPartitionOpts{Offset: 0, Topic: "t", Partition: 3, IsolationLevel: kgo.ReadCommitted()}, rp)
	require.NoError(t, fp.Err)
	require.Equal(t, int64(13), next)
	type ts struct {
		Offset int64
		Millis int64
		Type   int8
	}
	var got []ts
	for _, r := range fp.Records {
		got = append(got, ts{r.Offset, r.Timestamp.UnixMilli(), r.Attrs.TimestampType()})
	}
	require.Equal(t, []ts{
		{0, NoTimestamp, -1},
		{1, y9999, 0},
		{2, 9223372036855, 1}, {3, 9223372036855, 1},
		{4, -9223372036855, 0}, {5, NoTimestamp, -1},
		{6, y9999, 0}, {7, y9999 + 1, 0}, {8, -1, 0},
		{9, y9999, 0}, {10, y9999 + 1, 0},
		{11, 9223372036854775, 1}, {12, 9223372036854775, 1},
	}, got)

	// From the middle of batches: the records below the offset are not
	// returned, the others keep their timestamps.
	fp, _ = processFetch(kgo.ProcessFetchPartitionOpts{Offset: 7, Topic: "t", Partition: 3, IsolationLevel: kgo.ReadCommitted()}, rp)
	require.NoError(t, fp.Err)
	require.Len(t, fp.Records, 6)
	require.Equal(t, int64(7), fp.Records[0].Offset)
	require.Equal(t, int64(y9999+1), fp.Records[0].Timestamp.UnixMilli())
}

// fetchResponse is a fetch answer of n batches of 100 records of 100-byte
// values, gzip when compressed.
func fetchResponse(t testing.TB, n int, compressed bool) *kmsg.FetchResponseTopicPartition {
	var in []byte
	deltas := make([]int64, 100)
	for i := range deltas {
		deltas[i] = int64(i)
	}
	var attrs int16
	if compressed {
		attrs = 1
	}
	for b := 0; b < n; b++ {
		in = append(in, recordBatch(t, int64(b*100), attrs, 1700000000000, 1700000000099, deltas...)...)
	}
	return &kmsg.FetchResponseTopicPartition{HighWatermark: int64(n * 100), LastStableOffset: int64(n * 100), RecordBatches: in}
}

// BenchmarkProcessFetch compares franz-go's ProcessFetchPartition with
// processFetch (the same, plus the raw timestamps) on 10,000 records.
func BenchmarkProcessFetch(b *testing.B) {
	for _, compressed := range []bool{false, true} {
		rp := fetchResponse(b, 100, compressed)
		o := kgo.ProcessFetchPartitionOpts{Topic: "t", IsolationLevel: kgo.ReadCommitted()}
		name := map[bool]string{false: "none", true: "gzip"}[compressed]
		b.Run("franz-go/"+name, func(b *testing.B) {
			for b.Loop() {
				fp, _ := kgo.ProcessFetchPartition(o, rp, kgo.DefaultDecompressor(), nil)
				if len(fp.Records) != 10000 {
					b.Fatal(len(fp.Records), fp.Err)
				}
			}
		})
		b.Run("processFetch/"+name, func(b *testing.B) {
			for b.Loop() {
				fp, _ := processFetch(o, rp)
				if len(fp.Records) != 10000 {
					b.Fatal(len(fp.Records), fp.Err)
				}
			}
		})
	}
}
