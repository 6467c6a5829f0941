package kafka

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/minkhq/mink/outage"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// rangeFetch is how ReadRange fetches: bytes bounds one fetch response; a
// range takes several fetches and, with ahead, each is sent while the one
// before is parsed, so that the broker's work and the network round trip
// overlap the client's (smaller fetches overlap more and cost a request
// each). A variable for the benchmark that compares it with one large
// fetch at a time.
var rangeFetch = struct {
	bytes int32
	ahead bool
}{2 << 20, true}

// ReadRange returns the data records of [start, end) of one partition, in
// offset order, read with read_committed: records of aborted transactions
// and control records are excluded, and offsets Kafka no longer holds
// (deleted below the log start offset, or removed by compaction) are
// skipped. It returns once it has passed end-1, or once the partition's
// last stable offset says nothing more can come below end.
//
// ReadRange issues Fetch requests of rangeFetch.bytes to the partition
// leader on the shared client (no consumer, no new connection); the next
// one is sent while a response is parsed, at the offset where its whole
// record batches end, and used only if the parse ends there too
// (fetchAhead). Errors that mean Kafka could not be reached wrap
// outage.ErrUnavailable; an unknown topic wraps ErrUnknownTopic.
func (c *Client) ReadRange(ctx context.Context, topic string, partition int32, start, end int64) ([]*kgo.Record, error) {
	if end <= start {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 2*c.timeout)
	defer cancel()
	// One slice for the whole range (offsets without a record, e.g. of
	// transactions, only leave capacity unused); bounded for huge ranges.
	out := make([]*kgo.Record, 0, min(end-start, 1<<20))
	opts := fetchOpts{maxWait: 500 * time.Millisecond, maxBytes: rangeFetch.bytes}
	var ahead fetchAhead
	defer ahead.drop()
	next := start
	refresh := false
	for next < end {
		rp, err := ahead.take(next)
		if rp == nil && err == nil {
			rp, err = fetchRaw(ctx, c.cl, topic, partition, next, refresh, opts)
		}
		if err != nil {
			return nil, err
		}
		if rp.ErrorCode == 0 && rangeFetch.ahead {
			if at := batchesEnd(rp.RecordBatches, next); at > next && at < end {
				ahead.start(ctx, at, func(ctx context.Context) (*kmsg.FetchResponseTopicPartition, error) {
					return fetchRaw(ctx, c.cl, topic, partition, at, false, opts)
				})
			}
		}
		fp, nextOffset := processFetch(processOpts(topic, partition, next, opts), rp)
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

// fetchAhead is at most one fetch in flight, sent before its offset was
// known to be the next one; it is used only if it is (take), else dropped.
type fetchAhead struct {
	at     int64
	cancel context.CancelFunc
	done   chan struct{}
	rp     *kmsg.FetchResponseTopicPartition
	err    error
}

// start sends fetch(ctx) for offset at in the background.
func (a *fetchAhead) start(ctx context.Context, at int64, fetch func(context.Context) (*kmsg.FetchResponseTopicPartition, error)) {
	a.drop()
	ctx, a.cancel = context.WithCancel(ctx)
	a.at, a.done = at, make(chan struct{})
	go func() {
		defer close(a.done)
		a.rp, a.err = fetch(ctx)
	}()
}

// take returns the answer of the fetch in flight if it is for offset at,
// waiting for it; else it drops it and returns nil, nil.
func (a *fetchAhead) take(at int64) (*kmsg.FetchResponseTopicPartition, error) {
	if a.done == nil || a.at != at {
		a.drop()
		return nil, nil
	}
	<-a.done
	rp, err := a.rp, a.err
	a.cancel()
	*a = fetchAhead{}
	return rp, err
}

// drop cancels the fetch in flight, if any, and waits for it to end.
func (a *fetchAhead) drop() {
	if a.done == nil {
		return
	}
	a.cancel()
	<-a.done
	*a = fetchAhead{}
}

// batchesEnd returns the offset after the last whole record batch (magic
// v2) of raw, a partition's RecordBatches of a fetch response, or 0 when
// there is none or raw has a message set of an older magic. It is the
// offset franz-go's parsing of raw goes on from (kgo.ProcessFetchPartition
// moves past every whole batch: data, control, aborted); a truncated batch
// at the end of a response is not whole.
func batchesEnd(raw []byte, offset int64) int64 {
	var end int64
	for len(raw) >= 27 {
		n := int64(binary.BigEndian.Uint32(raw[8:12]))
		if n < 15 || int64(len(raw)) < 12+n || raw[16] != 2 {
			break
		}
		base := int64(binary.BigEndian.Uint64(raw[0:8]))
		last := base + int64(int32(binary.BigEndian.Uint32(raw[23:27])))
		if last+1 > end {
			end = last + 1
		}
		raw = raw[12+n:]
	}
	if end <= offset {
		return 0
	}
	return end
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
	rp, err := fetchRaw(ctx, cl, topic, partition, offset, refresh, o)
	if err != nil {
		return kgo.FetchPartition{}, 0, err
	}
	fp, next := processFetchWith(processOpts(topic, partition, offset, o), rp, o.dec)
	return fp, next, nil
}

// processOpts are processFetch's options for a fetch at offset.
func processOpts(topic string, partition int32, offset int64, o fetchOpts) kgo.ProcessFetchPartitionOpts {
	return kgo.ProcessFetchPartitionOpts{
		Offset: offset, IsolationLevel: kgo.ReadCommitted(), Topic: topic, Partition: partition,
		KeepControlRecords: o.keepControl, Pools: o.pools,
	}
}

// fetchRaw sends one read_committed Fetch request for topic/partition at
// offset to the partition leader through cl and returns the partition's
// answer, unparsed (its ErrorCode may hold a partition-level error). Errors
// are those of fetchOnce.
func fetchRaw(ctx context.Context, cl *kgo.Client, topic string, partition int32, offset int64, refresh bool, o fetchOpts) (*kmsg.FetchResponseTopicPartition, error) {
	leader, topicID, err := leaderOf(ctx, cl, topic, partition, refresh)
	if err != nil {
		return nil, err
	}
	req := kmsg.NewPtrFetchRequest()
	req.MaxWaitMillis = int32(o.maxWait / time.Millisecond)
	req.MinBytes = 1
	// The partition's limit binds, not the request's: kfake (franz-go's
	// in-process broker, of the tests and benchmarks) leaves the aborted
	// transactions out of a response it cut at the request's limit, and
	// their records would then be returned as committed.
	req.MaxBytes = 2 * o.maxBytes
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
			return nil, err
		}
		return nil, unavailable(err)
	}
	resp := kresp.(*kmsg.FetchResponse)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, unavailable(err)
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return nil, fmt.Errorf("kafka: %w: fetch answered %d topics", outage.ErrUnavailable, len(resp.Topics))
	}
	return &resp.Topics[0].Partitions[0], nil
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
		limit = time.Nanosecond // 0 would mean franz-go's MetadataMinAge, 5 s
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
