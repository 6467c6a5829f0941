package kafka

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// idleMaxWait is how long the broker may hold the idle fetch waiting for a
// record of any parked partition: one request per broker per idleMaxWait
// while nothing arrives, and at most about that much more latency for the
// first record after a partition went idle.
const idleMaxWait = 500 * time.Millisecond

// idleMargin is how much longer than idleMaxWait an idle Fetch request may
// take before it counts as failed: one broker that does not answer must
// not hold up the next round for the others.
const idleMargin = 2 * time.Second

// idleMetadataAge is how old the idle fetch's partition leaders may be; a
// partition error refreshes them at once.
const idleMetadataAge = 30 * time.Second

// idleFetch is the node's one fetch session for caught-up partitions
// (docs/design.md §4.3). A Reader whose fetch came back empty parks its
// partition here (park) and stops fetching; the idle fetch sends one
// long-polling Fetch request per broker for every parked partition, each
// at its own offset, and hands a partition's answer, unparsed, to its
// Reader as soon as it holds a record batch or an error. The Reader parses
// it as it parses its own fetches (processFetch), so that the records and
// their timestamps are those of a dedicated fetch, and goes back to its
// dedicated fetch loop. An idle node thus costs one request per broker per
// idleMaxWait, whatever its partition count.
//
// It uses a client of its own: its long polls must not hold up the shared
// client's requests (ReadRange, ListOffsets) on the same connection.
type idleFetch struct {
	c *Client

	mu     sync.Mutex
	parked map[*Reader]*parking
	cl     *kgo.Client // made by the first park
	// changed wakes the loop when a partition parks.
	changed chan struct{}
	// refresh asks for fresh metadata before the next request.
	refresh bool
	running bool
	ctx     context.Context
	cancel  context.CancelFunc
	done    chan struct{}

	// requests counts Fetch requests sent (tests).
	requests atomic.Int64
}

// parking is one Reader's parked partition.
type parking struct {
	topic     string
	partition int32
	offset    int64
	// answer receives the partition's fetch answer (nil: fetch again
	// yourself); buffered, written once.
	answer chan *kmsg.FetchResponseTopicPartition
}

func newIdleFetch(c *Client) *idleFetch {
	ctx, cancel := context.WithCancel(context.Background())
	return &idleFetch{c: c, parked: map[*Reader]*parking{}, changed: make(chan struct{}, 1), ctx: ctx, cancel: cancel,
		done: make(chan struct{})}
}

// park registers r's partition at offset and returns the channel its
// answer comes on. The caller must call unpark when it stops waiting.
func (f *idleFetch) park(r *Reader, offset int64) (<-chan *kmsg.FetchResponseTopicPartition, error) {
	p := &parking{topic: r.topic, partition: r.partition, offset: offset, answer: make(chan *kmsg.FetchResponseTopicPartition, 1)}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ctx.Err() != nil {
		p.answer <- nil
		return p.answer, nil
	}
	if f.cl == nil {
		cl, err := f.c.newClient()
		if err != nil {
			return nil, err
		}
		f.cl = cl
	}
	f.parked[r] = p
	if !f.running {
		f.running = true
		go f.run()
	}
	select {
	case f.changed <- struct{}{}:
	default:
	}
	return p.answer, nil
}

// unpark removes r's parked partition, if still parked.
func (f *idleFetch) unpark(r *Reader) {
	f.mu.Lock()
	delete(f.parked, r)
	f.mu.Unlock()
}

// close stops the loop and closes the client.
func (f *idleFetch) close() {
	f.mu.Lock()
	f.cancel()
	running, cl := f.running, f.cl
	for r, p := range f.parked {
		p.answer <- nil
		delete(f.parked, r)
	}
	f.mu.Unlock()
	if running {
		<-f.done
	}
	if cl != nil {
		cl.Close()
	}
}

// run sends the idle fetches while partitions are parked.
func (f *idleFetch) run() {
	defer close(f.done)
	for {
		f.mu.Lock()
		parked := make(map[*Reader]*parking, len(f.parked))
		for r, p := range f.parked {
			parked[r] = p
		}
		refresh := f.refresh
		f.refresh = false
		f.mu.Unlock()
		if len(parked) == 0 {
			select {
			case <-f.ctx.Done():
				return
			case <-f.changed:
				continue
			}
		}
		if !f.round(parked, refresh) {
			// Kafka did not answer: the parked readers fetch themselves
			// (and report the outage); pause before the next request.
			select {
			case <-f.ctx.Done():
				return
			case <-time.After(readerRetry):
			}
		}
		if f.ctx.Err() != nil {
			return
		}
	}
}

// round sends one Fetch request per partition leader for the parked
// partitions and hands out the answers. It returns false when a request
// failed.
func (f *idleFetch) round(parked map[*Reader]*parking, refresh bool) bool {
	ctx := f.ctx
	topics := map[string]bool{}
	for _, p := range parked {
		topics[p.topic] = true
	}
	mctx, cancel := context.WithTimeout(ctx, f.c.timeout)
	leaders, err := leadersOf(mctx, f.cl, topics, refresh)
	cancel()
	if err != nil {
		f.refreshNext()
		f.wakeAll(parked)
		return false
	}
	byBroker := map[int32]map[*Reader]*parking{}
	for r, p := range parked {
		l, ok := leaders[topicPartition{p.topic, p.partition}]
		if !ok {
			// No leader known: the reader finds out itself.
			f.deliver(r, p, nil)
			continue
		}
		if byBroker[l.leader] == nil {
			byBroker[l.leader] = map[*Reader]*parking{}
		}
		byBroker[l.leader][r] = p
	}
	var wg sync.WaitGroup
	var failed atomic.Bool
	for broker, ps := range byBroker {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !f.fetch(ctx, broker, ps, leaders) {
				failed.Store(true)
			}
		}()
	}
	wg.Wait()
	return !failed.Load()
}

// fetch sends one Fetch request to broker for ps and hands each partition
// that has a record batch or an error its answer. It returns false when the
// request failed (its readers are woken to fetch themselves).
func (f *idleFetch) fetch(ctx context.Context, broker int32, ps map[*Reader]*parking, leaders map[topicPartition]leaderInfo) bool {
	req := kmsg.NewPtrFetchRequest()
	req.MaxWaitMillis = int32(idleMaxWait / time.Millisecond)
	req.MinBytes = 1
	req.IsolationLevel = 1 // read_committed
	// As in fetchRaw: the partitions' limits bind, never the request's.
	req.MaxBytes = int32(min(int64(2*readerFetchBytes)*int64(len(ps)), 1<<30))
	idx := map[string]int{}
	type key struct {
		topic     string
		partition int32
	}
	want := map[key][]*Reader{}
	at := map[key]int64{}
	for r, p := range ps {
		k := key{p.topic, p.partition}
		if o, ok := at[k]; ok && o != p.offset {
			// Two readers of one partition at different offsets: one
			// request asks for one offset; the other fetches itself.
			f.deliver(r, p, nil)
			continue
		}
		at[k] = p.offset
		i, ok := idx[p.topic]
		if !ok {
			i = len(req.Topics)
			idx[p.topic] = i
			rt := kmsg.NewFetchRequestTopic()
			rt.Topic, rt.TopicID = p.topic, leaders[topicPartition{p.topic, p.partition}].topicID
			req.Topics = append(req.Topics, rt)
		}
		if len(want[k]) == 0 {
			rp := kmsg.NewFetchRequestTopicPartition()
			rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = p.partition, p.offset, readerFetchBytes
			req.Topics[i].Partitions = append(req.Topics[i].Partitions, rp)
		}
		want[k] = append(want[k], r)
	}
	f.requests.Add(1)
	rctx, cancel := context.WithTimeout(ctx, idleMaxWait+idleMargin)
	defer cancel()
	kresp, err := f.cl.Broker(int(broker)).Request(rctx, req)
	if err != nil {
		// The broker may be gone: its partitions' new leaders are in
		// fresh metadata.
		f.refreshNext()
		f.wakeAll(ps)
		return ctx.Err() != nil
	}
	resp := kresp.(*kmsg.FetchResponse)
	if resp.ErrorCode != 0 {
		f.refreshNext()
		f.wakeAll(ps)
		return false
	}
	for i := range resp.Topics {
		rt := &resp.Topics[i]
		topic := rt.Topic
		if topic == "" {
			// Fetch v13+ answers by topic id.
			for t, j := range idx {
				if req.Topics[j].TopicID == rt.TopicID {
					topic = t
				}
			}
		}
		for j := range rt.Partitions {
			rp := &rt.Partitions[j]
			for _, r := range want[key{topic, rp.Partition}] {
				p := ps[r]
				if rp.ErrorCode != 0 || len(rp.RecordBatches) > 0 {
					if rp.ErrorCode != 0 {
						f.refreshNext()
					}
					f.deliver(r, p, rp)
					continue
				}
				if rp.LastStableOffset > p.offset {
					// Records are there but none came: the request's
					// bytes ran out before this partition. The reader's
					// own fetch returns at least one whole batch.
					f.deliver(r, p, nil)
					continue
				}
				// Still caught up: only the offsets are news.
				r.offsets.Store(&Offsets{LogStart: rp.LogStartOffset, LastStable: rp.LastStableOffset, HighWatermark: rp.HighWatermark})
			}
		}
	}
	return true
}

// refreshNext asks for fresh metadata before the next request.
func (f *idleFetch) refreshNext() {
	f.mu.Lock()
	f.refresh = true
	f.mu.Unlock()
}

// deliver hands rp to r, if r is still parked as p, and unparks it.
func (f *idleFetch) deliver(r *Reader, p *parking, rp *kmsg.FetchResponseTopicPartition) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.parked[r] != p {
		return
	}
	delete(f.parked, r)
	p.answer <- rp
}

// wakeAll unparks every reader of ps: each fetches itself.
func (f *idleFetch) wakeAll(ps map[*Reader]*parking) {
	for r, p := range ps {
		f.deliver(r, p, nil)
	}
}

// topicPartition names one partition.
type topicPartition struct {
	topic     string
	partition int32
}

// leaderInfo is a partition's leader and its topic's id.
type leaderInfo struct {
	leader  int32
	topicID [16]byte
}

// leadersOf returns the leader of every partition of topics (one metadata
// request for the topics whose cached metadata is older than
// idleMetadataAge, or all of them when refresh is set). Partitions without
// a leader are left out.
func leadersOf(ctx context.Context, cl *kgo.Client, topics map[string]bool, refresh bool) (map[topicPartition]leaderInfo, error) {
	req := kmsg.NewPtrMetadataRequest()
	for t := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(t)
		req.Topics = append(req.Topics, rt)
	}
	limit := idleMetadataAge
	if refresh {
		limit = time.Nanosecond
	}
	resp, err := cl.RequestCachedMetadata(ctx, req, limit)
	if err != nil {
		return nil, unavailable(err)
	}
	out := map[topicPartition]leaderInfo{}
	for _, t := range resp.Topics {
		if t.Topic == nil || t.ErrorCode != 0 {
			continue
		}
		for _, p := range t.Partitions {
			if p.Leader >= 0 {
				out[topicPartition{*t.Topic, p.Partition}] = leaderInfo{leader: p.Leader, topicID: t.TopicID}
			}
		}
	}
	return out, nil
}
