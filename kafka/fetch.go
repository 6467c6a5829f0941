package kafka

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fetchMaxBytes bounds one fetch response (and one partition's share of
// it); a range larger than this takes several fetches.
const fetchMaxBytes = 32 << 20

// ReadRange returns the data records of [start, end) of one partition, in
// offset order, read with read_committed: records of aborted transactions
// and control records are excluded, and offsets Kafka no longer holds
// (deleted below the log start offset, or removed by compaction) are
// skipped. It returns once it has passed end-1, or once the partition's
// last stable offset says nothing more can come below end.
//
// ReadRange issues Fetch requests to the partition leader on the shared
// client (no consumer, no new connection), so a build costs one or a few
// round trips. Errors that mean Kafka could not be reached wrap
// ErrUnavailable; an unknown topic wraps ErrUnknownTopic.
func (c *Client) ReadRange(ctx context.Context, topic string, partition int32, start, end int64) ([]*kgo.Record, error) {
	if end <= start {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 2*c.timeout)
	defer cancel()
	var out []*kgo.Record
	next := start
	refresh := false
	for next < end {
		leader, topicID, err := c.leader(ctx, topic, partition, refresh)
		if err != nil {
			return nil, err
		}
		refresh = false
		req := kmsg.NewPtrFetchRequest()
		req.MaxWaitMillis = 500
		req.MinBytes = 1
		req.MaxBytes = fetchMaxBytes
		req.IsolationLevel = 1 // read_committed
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic, rt.TopicID = topic, topicID
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = partition, next, fetchMaxBytes
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		kresp, err := c.cl.Broker(int(leader)).Request(ctx, req)
		if err != nil {
			if ctx.Err() != nil && errors.Is(err, context.Canceled) {
				return nil, err
			}
			return nil, unavailable(err)
		}
		resp := kresp.(*kmsg.FetchResponse)
		if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
			return nil, unavailable(err)
		}
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			return nil, fmt.Errorf("%w: fetch answered %d topics", ErrUnavailable, len(resp.Topics))
		}
		fp, nextOffset := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{
			Offset: next, IsolationLevel: kgo.ReadCommitted(), Topic: topic, Partition: partition,
		}, &resp.Topics[0].Partitions[0], kgo.DefaultDecompressor(), nil)
		switch {
		case fp.Err == nil:
		case errors.Is(fp.Err, kerr.OffsetOutOfRange):
			// Below the log start offset: those records are gone; go on
			// from the log start. At or past the end: nothing more.
			offs, err := c.ListOffsets(ctx, topic)
			if err != nil {
				return nil, err
			}
			o := offs[partition]
			if next >= o.LogStart || o.LogStart >= end {
				return out, nil
			}
			next = o.LogStart
			continue
		case errors.Is(fp.Err, kerr.NotLeaderForPartition), errors.Is(fp.Err, kerr.FencedLeaderEpoch),
			errors.Is(fp.Err, kerr.UnknownLeaderEpoch), errors.Is(fp.Err, kerr.LeaderNotAvailable),
			errors.Is(fp.Err, kerr.UnknownTopicID), errors.Is(fp.Err, kerr.ReplicaNotAvailable):
			refresh = true
			if !sleep(ctx, 50*time.Millisecond) {
				return nil, unavailable(ctx.Err())
			}
			continue
		default:
			return nil, unavailable(fp.Err)
		}
		for _, rec := range fp.Records {
			if rec.Offset >= end {
				break
			}
			out = append(out, rec)
		}
		if nextOffset > next {
			next = nextOffset
			continue
		}
		// Nothing parsed: the rest of the range is not readable (yet).
		// read_committed stops at the last stable offset; past it, or
		// past the high watermark, nothing more will come below end.
		if fp.LastStableOffset <= next || fp.HighWatermark <= next {
			return out, nil
		}
		return nil, fmt.Errorf("%w: fetch at offset %d of %s/%d made no progress (last stable offset %d)",
			ErrUnavailable, next, topic, partition, fp.LastStableOffset)
	}
	return out, nil
}

// leader returns the partition leader's broker id and the topic id, from
// the client's metadata cache (at most a second old), or fresh when
// refresh is set.
func (c *Client) leader(ctx context.Context, topic string, partition int32, refresh bool) (int32, [16]byte, error) {
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	limit := time.Second
	if refresh {
		limit = 0
	}
	resp, err := c.cl.RequestCachedMetadata(ctx, req, limit)
	if err != nil {
		return 0, [16]byte{}, unavailable(err)
	}
	for _, t := range resp.Topics {
		if t.Topic == nil || *t.Topic != topic {
			continue
		}
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			return 0, [16]byte{}, unavailable(err)
		}
		for _, p := range t.Partitions {
			if p.Partition != partition {
				continue
			}
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil && p.Leader < 0 {
				return 0, [16]byte{}, unavailable(err)
			}
			if p.Leader < 0 {
				return 0, [16]byte{}, fmt.Errorf("%w: %s/%d has no leader", ErrUnavailable, topic, partition)
			}
			return p.Leader, t.TopicID, nil
		}
		return 0, [16]byte{}, fmt.Errorf("%w: %s has no partition %d", ErrUnknownTopic, topic, partition)
	}
	return 0, [16]byte{}, fmt.Errorf("%w: %s", ErrUnknownTopic, topic)
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
