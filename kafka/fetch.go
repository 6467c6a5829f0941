package kafka

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/minkhq/mink/outage"
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
// outage.ErrUnavailable; an unknown topic wraps ErrUnknownTopic.
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
		fp, nextOffset, err := fetchOnce(ctx, c.cl, topic, partition, next, refresh, fetchOpts{
			maxWait: 500 * time.Millisecond, maxBytes: fetchMaxBytes})
		if err != nil {
			return nil, err
		}
		refresh = false
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
		case retryable(fp.Err):
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
		return nil, fmt.Errorf("kafka: %w: fetch at offset %d of %s/%d made no progress (last stable offset %d)",
			outage.ErrUnavailable, next, topic, partition, fp.LastStableOffset)
	}
	return out, nil
}

// fetchOpts are the settings of one Fetch request.
type fetchOpts struct {
	maxWait  time.Duration
	maxBytes int32
	// keepControl returns control records (commit and abort markers).
	keepControl bool
	// pools and dec, when set, are a Reader's record pool and a
	// decompressor drawing from it (see recordPool).
	pools []kgo.Pool
	dec   kgo.Decompressor
}

// fetchOnce sends one read_committed Fetch request for topic/partition at
// offset to the partition leader through cl and processes the answer with
// processFetch (franz-go's parsing, exact timestamps). It returns the
// partition's result (fp.Err holds a partition-level error) and the offset
// to fetch next. Errors of the request itself wrap outage.ErrUnavailable (or
// ErrUnknownTopic), except a cancellation of ctx.
func fetchOnce(ctx context.Context, cl *kgo.Client, topic string, partition int32, offset int64, refresh bool, o fetchOpts) (kgo.FetchPartition, int64, error) {
	leader, topicID, err := leaderOf(ctx, cl, topic, partition, refresh)
	if err != nil {
		return kgo.FetchPartition{}, 0, err
	}
	req := kmsg.NewPtrFetchRequest()
	req.MaxWaitMillis = int32(o.maxWait / time.Millisecond)
	req.MinBytes = 1
	req.MaxBytes = o.maxBytes
	req.IsolationLevel = 1 // read_committed
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = topic, topicID
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = partition, offset, o.maxBytes
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	kresp, err := cl.Broker(int(leader)).Request(ctx, req)
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			return kgo.FetchPartition{}, 0, err
		}
		return kgo.FetchPartition{}, 0, unavailable(err)
	}
	resp := kresp.(*kmsg.FetchResponse)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return kgo.FetchPartition{}, 0, unavailable(err)
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return kgo.FetchPartition{}, 0, fmt.Errorf("kafka: %w: fetch answered %d topics", outage.ErrUnavailable, len(resp.Topics))
	}
	fp, next := processFetchWith(kgo.ProcessFetchPartitionOpts{
		Offset: offset, IsolationLevel: kgo.ReadCommitted(), Topic: topic, Partition: partition,
		KeepControlRecords: o.keepControl, Pools: o.pools,
	}, &resp.Topics[0].Partitions[0], o.dec)
	return fp, next, nil
}

// retryable reports whether a partition error of a fetch means the leader
// moved or is not ready: refresh the metadata and fetch again.
func retryable(err error) bool {
	return errors.Is(err, kerr.NotLeaderForPartition) || errors.Is(err, kerr.FencedLeaderEpoch) ||
		errors.Is(err, kerr.UnknownLeaderEpoch) || errors.Is(err, kerr.LeaderNotAvailable) ||
		errors.Is(err, kerr.UnknownTopicID) || errors.Is(err, kerr.ReplicaNotAvailable)
}

// leaderOf returns the partition leader's broker id and the topic id, from
// cl's metadata cache (at most a second old), or fresh when refresh is set.
func leaderOf(ctx context.Context, cl *kgo.Client, topic string, partition int32, refresh bool) (int32, [16]byte, error) {
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	limit := time.Second
	if refresh {
		limit = 0
	}
	resp, err := cl.RequestCachedMetadata(ctx, req, limit)
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
				return 0, [16]byte{}, fmt.Errorf("kafka: %w: %s/%d has no leader", outage.ErrUnavailable, topic, partition)
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
