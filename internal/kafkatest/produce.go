// Package kafkatest produces records whose fields Mink must read back
// exactly, for tests: franz-go's producer takes a record's timestamp as a
// time.Time and encodes it through int64 nanoseconds
// (Timestamp.UnixNano()/1e6), so it cannot produce every timestamp Kafka
// can store. ProduceBatch writes a record batch itself, with raw
// millisecond timestamps, in a Produce request sent over the wire.
package kafkatest

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Record is one record of a batch: its raw CreateTime in milliseconds
// since the Unix epoch, key and value (nil for null).
type Record struct {
	Millis     int64
	Key, Value []byte
}

// Batch says how ProduceBatch writes its record batch.
type Batch struct {
	// Compression is the batch's codec (kgo.NoCompression() by default).
	Compression kgo.CompressionCodec
	// LogAppendTime sets the batch's timestamp type to LogAppendTime: the
	// broker sets the batch's timestamps on append. Not for kfake: it
	// rewrites the timestamps without recomputing the batch's CRC, so every
	// reader then fails on the batch (a real broker recomputes it).
	LogAppendTime bool
}

// ProduceBatch appends recs as one record batch (magic 2, non-idempotent,
// acks=all) to topic/partition, through cl, sent to the partition leader.
// FirstTimestamp is the first record's timestamp, each record's delta is
// its Millis minus FirstTimestamp (int64 arithmetic, wrapping as Kafka's),
// MaxTimestamp the largest Millis. It returns the batch's base offset.
func ProduceBatch(ctx context.Context, cl *kgo.Client, topic string, partition int32, b Batch, recs ...Record) (int64, error) {
	if len(recs) == 0 {
		return 0, fmt.Errorf("kafkatest: no records")
	}
	first, maxTS := recs[0].Millis, recs[0].Millis
	var raw []byte
	for i, r := range recs {
		maxTS = max(maxTS, r.Millis)
		kr := kmsg.NewRecord()
		kr.TimestampDelta64 = r.Millis - first
		kr.OffsetDelta = int32(i)
		kr.Key, kr.Value = r.Key, r.Value
		body := kr.AppendTo(nil) // Length 0: one byte, then the body
		kr.Length = int32(len(body) - 1)
		raw = kr.AppendTo(raw)
	}
	var attrs int16
	if b.LogAppendTime {
		attrs |= 0x08
	}
	if b.Compression != kgo.NoCompression() && b.Compression != (kgo.CompressionCodec{}) {
		comp, err := kgo.DefaultCompressor(b.Compression)
		if err != nil {
			return 0, err
		}
		out, codec := comp.Compress(new(bytes.Buffer), raw)
		raw = append([]byte(nil), out...)
		attrs |= int16(codec)
	}
	rb := kmsg.RecordBatch{
		FirstOffset: 0, PartitionLeaderEpoch: -1, Magic: 2, Attributes: attrs,
		LastOffsetDelta: int32(len(recs) - 1), FirstTimestamp: first, MaxTimestamp: maxTS,
		ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1, NumRecords: int32(len(recs)), Records: raw,
	}
	rb.Length = int32(len(rb.AppendTo(nil)) - 12)
	enc := rb.AppendTo(nil)
	binary.BigEndian.PutUint32(enc[17:], crc32.Checksum(enc[21:], crc32.MakeTable(crc32.Castagnoli)))

	leader, topicID, err := leaderOf(ctx, cl, topic, partition)
	if err != nil {
		return 0, err
	}
	req := kmsg.NewPtrProduceRequest()
	req.Acks = -1
	req.TimeoutMillis = 10000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic, rt.TopicID = topic, topicID
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition, rp.Records = partition, enc
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	kresp, err := cl.Broker(int(leader)).Request(ctx, req)
	if err != nil {
		return 0, err
	}
	resp := kresp.(*kmsg.ProduceResponse)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return 0, fmt.Errorf("kafkatest: produce answered %d topics", len(resp.Topics))
	}
	p := resp.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
		return 0, fmt.Errorf("kafkatest: produce to %s/%d: %w", topic, partition, err)
	}
	return p.BaseOffset, nil
}

func leaderOf(ctx context.Context, cl *kgo.Client, topic string, partition int32) (int32, [16]byte, error) {
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return 0, [16]byte{}, err
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if t.Topic != nil && *t.Topic == topic && p.Partition == partition && p.Leader >= 0 {
				return p.Leader, t.TopicID, nil
			}
		}
	}
	return 0, [16]byte{}, fmt.Errorf("kafkatest: no leader for %s/%d", topic, partition)
}
