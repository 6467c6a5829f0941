// Package kafka is Mink's side of Kafka, on franz-go: topic metadata, the
// three offsets of a partition (log start offset, last stable offset, high
// watermark), reading a partition from an offset with read_committed, and
// reading one offset range back for a build.
package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/minkhq/mink/outage"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"golang.org/x/sync/errgroup"
)

// ErrUnknownTopic is returned when the topic does not exist.
var ErrUnknownTopic = errors.New("kafka: unknown topic")

// Client is a shared franz-go client for metadata and offset requests.
// Reading partitions uses clients of their own (see Reader, ReadRange).
type Client struct {
	brokers []string
	// opts reach the brokers (seeds, TLS, SASL): every client made for
	// this one starts from them.
	opts    []kgo.Opt
	cl      *kgo.Client
	adm     *kadm.Client
	log     *slog.Logger
	timeout time.Duration
	// idle is the node's fetch session for caught-up partitions.
	idle *idleFetch
}

// New returns a client; it does not contact Kafka until first used.
// Errors: those of Config.ClientOpts.
func New(cfg Config) (*Client, error) {
	cfg = cfg.WithDefaults()
	opts, err := cfg.ClientOpts()
	if err != nil {
		return nil, err
	}
	c := &Client{brokers: cfg.Brokers, opts: opts, log: cfg.Logger, timeout: cfg.RequestTimeout}
	if c.cl, err = c.newClient(); err != nil {
		return nil, err
	}
	c.adm = kadm.NewClient(c.cl)
	c.idle = newIdleFetch(c)
	return c, nil
}

// newClient returns a franz-go client on the brokers, with opts after the
// connection's and the retry bounds.
func (c *Client) newClient(opts ...kgo.Opt) (*kgo.Client, error) {
	all := append(append(c.opts[:len(c.opts):len(c.opts)], kgo.RequestRetries(2), kgo.RetryTimeout(c.timeout)), opts...)
	cl, err := kgo.NewClient(all...)
	if err != nil {
		return nil, fmt.Errorf("kafka: %w", err)
	}
	return cl, nil
}

// Close releases the client's connections and stops its idle fetch;
// Readers parked in it go back to fetching on their own.
func (c *Client) Close() {
	c.idle.close()
	c.cl.Close()
}

// Brokers returns the seed brokers.
func (c *Client) Brokers() []string { return c.brokers }

// Partitions returns the number of partitions of topic, or ErrUnknownTopic.
func (c *Client) Partitions(ctx context.Context, topic string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	tds, err := c.adm.ListTopics(ctx, topic)
	if err != nil {
		return 0, unavailable(err)
	}
	td, ok := tds[topic]
	if !ok || errors.Is(td.Err, kerr.UnknownTopicOrPartition) {
		return 0, fmt.Errorf("%w: %s", ErrUnknownTopic, topic)
	}
	if td.Err != nil {
		return 0, unavailable(td.Err)
	}
	return len(td.Partitions), nil
}

// Offsets are the offsets of one partition (Kafka's ListOffsets).
type Offsets struct {
	// LogStart is the first offset Kafka still holds (log start offset).
	LogStart int64
	// LastStable is the last stable offset: the end of what read_committed
	// consumers can see (records of open transactions lie at or past it).
	LastStable int64
	// HighWatermark is the offset after the last replicated record.
	HighWatermark int64
}

// ListOffsets returns the offsets of every partition of topic.
func (c *Client) ListOffsets(ctx context.Context, topic string) (map[int32]Offsets, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	// Three ListOffsets requests (earliest, latest, latest read_committed),
	// sent at once: a table load waits for all three.
	var starts, ends, stables kadm.ListedOffsets
	err := c.retryPartitionErrors(ctx, func() error {
		g, gctx := errgroup.WithContext(ctx)
		for _, q := range []struct {
			into *kadm.ListedOffsets
			list func(context.Context, ...string) (kadm.ListedOffsets, error)
		}{{&starts, c.adm.ListStartOffsets}, {&ends, c.adm.ListEndOffsets}, {&stables, c.adm.ListCommittedOffsets}} {
			g.Go(func() error {
				offs, err := q.list(gctx, topic)
				if err == nil {
					err = offs.Error()
				}
				*q.into = offs
				return err
			})
		}
		return g.Wait()
	})
	if err != nil {
		return nil, unavailable(err)
	}
	out := make(map[int32]Offsets)
	starts.Each(func(o kadm.ListedOffset) {
		e, _ := ends.Lookup(topic, o.Partition)
		s, _ := stables.Lookup(topic, o.Partition)
		out[o.Partition] = Offsets{LogStart: o.Offset, HighWatermark: e.Offset, LastStable: s.Offset}
	})
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: %s", ErrUnknownTopic, topic)
	}
	return out, nil
}

// unavailable wraps outage.ErrUnavailable into err (ErrUnknownTopic for an
// unknown topic); a cancellation of the caller's context is returned as it
// is.
func unavailable(err error) error {
	if errors.Is(err, kerr.UnknownTopicOrPartition) {
		return fmt.Errorf("%w: %w", ErrUnknownTopic, err)
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	return fmt.Errorf("kafka: %w: %w", outage.ErrUnavailable, err)
}

// readerFetchBytes bounds one fetch of a Reader (compressed bytes): small,
// since a node runs a reader per partition and compressed batches grow
// several times when decoded into records.
const readerFetchBytes = 256 << 10

// readerMaxWait is how long the broker may hold a Reader's fetch waiting for
// records.
const readerMaxWait = 200 * time.Millisecond

// Reader reads one partition from an offset on, with read_committed:
// records of aborted transactions never appear, and control records are
// returned (IsControl) so that the caller sees every offset it passes.
//
// While its partition is busy it sends Fetch requests itself on a client
// of its own (its long-polling fetches must not queue behind other
// partitions' on a shared connection) and reads the answers as ReadRange
// does (processFetch): the records and their timestamps are the same,
// whichever of the two read them. A goroutine fetches one response ahead
// of Poll, so that the caller's work on one fetch overlaps the round trip
// of the next (as a Kafka consumer's buffered fetch does); that response
// (at most readerFetchBytes compressed) is the reader's memory beyond what
// Poll returned. Once a fetch comes back empty (the partition is caught
// up), the reader parks the partition in its Client's idle fetch, one
// request per broker for all parked partitions (idleFetch), and stops
// fetching until that hands it an answer with records (or an error), which
// it parses as its own.
type Reader struct {
	c         *Client
	cl        *kgo.Client
	topic     string
	partition int32

	// The fetch loop's own state.
	next    int64
	refresh bool
	// pool and dec give fetches their record slabs and decompression
	// buffers; Recycle returns them.
	pool *recordPool
	dec  kgo.Decompressor

	offsets atomic.Pointer[Offsets] // as of the last fetch
	results chan readResult
	start   sync.Once
	ctx     context.Context
	cancel  context.CancelFunc
	done    chan struct{}
}

type readResult struct {
	recs []*kgo.Record
	err  error
}

// Offsets returns the partition's offsets as the last fetch response gave
// them (zero before the first).
func (r *Reader) Offsets() Offsets {
	if o := r.offsets.Load(); o != nil {
		return *o
	}
	return Offsets{}
}

// NewReader starts reading topic/partition at offset.
func (c *Client) NewReader(topic string, partition int32, offset int64) (*Reader, error) {
	cl, err := c.newClient()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	pool := &recordPool{}
	return &Reader{c: c, cl: cl, topic: topic, partition: partition, next: offset,
		pool: pool, dec: kgo.DefaultDecompressor(pool),
		results: make(chan readResult), ctx: ctx, cancel: cancel, done: make(chan struct{})}, nil
}

// Poll returns the next records (data and control) in offset order, waiting
// until some arrive or ctx is done; on ctx expiry it returns (nil, nil).
// The records' memory comes from the reader's pool: a caller done with
// records may pass them to Recycle (and must not touch them after), so
// that later fetches reuse it; records not recycled are collected as usual.
// Errors that mean Kafka is unreachable wrap outage.ErrUnavailable; the
// reader tries again from the same offset. When the offset it reads at is
// below the log start offset (records deleted), it goes on from the log
// start offset.
func (r *Reader) Poll(ctx context.Context) ([]*kgo.Record, error) {
	r.start.Do(func() { go r.run() })
	select {
	case res := <-r.results:
		return res.recs, res.err
	case <-ctx.Done():
		return nil, nil
	}
}

// readerRetry is how long the fetch loop waits after an error before it
// fetches again.
const readerRetry = 100 * time.Millisecond

// run is the fetch loop: it hands each fetch's records (or error) to Poll
// and fetches the next meanwhile, until Close.
func (r *Reader) run() {
	defer close(r.done)
	for {
		recs, err := r.fetch(r.ctx)
		if r.ctx.Err() != nil {
			return
		}
		select {
		case r.results <- readResult{recs: recs, err: err}:
		case <-r.ctx.Done():
			return
		}
		if err != nil && !sleep(r.ctx, readerRetry) {
			return
		}
	}
}

// fetch returns the records of the next fetch that has any, or an error.
// A fetch that comes back empty parks the partition in the idle fetch
// (parked), whose answer is then parsed like a fetch's.
func (r *Reader) fetch(ctx context.Context) ([]*kgo.Record, error) {
	var parked *kmsg.FetchResponseTopicPartition
	for {
		o := fetchOpts{maxWait: readerMaxWait, maxBytes: readerFetchBytes, keepControl: true,
			pools: []kgo.Pool{r.pool}, dec: r.dec}
		var fp kgo.FetchPartition
		var next int64
		var err error
		fromIdle := parked != nil
		if fromIdle {
			fp, next = processFetchWith(processOpts(r.topic, r.partition, r.next, o), parked, r.dec)
			parked = nil
		} else {
			fp, next, err = fetchOnce(ctx, r.cl, r.topic, r.partition, r.next, r.refresh, o)
		}
		r.refresh = false
		if ctx.Err() != nil {
			return nil, nil
		}
		if err != nil {
			r.refresh = true
			return nil, err
		}
		switch {
		case fp.Err == nil:
			r.offsets.Store(&Offsets{LogStart: fp.LogStartOffset, LastStable: fp.LastStableOffset, HighWatermark: fp.HighWatermark})
		case errors.Is(fp.Err, kerr.OffsetOutOfRange):
			offs, err := r.c.ListOffsets(ctx, r.topic)
			if err != nil {
				if ctx.Err() != nil {
					return nil, nil
				}
				return nil, err
			}
			o := offs[r.partition]
			r.offsets.Store(&o)
			if r.next < o.LogStart {
				r.next = o.LogStart
				continue
			}
			return nil, fmt.Errorf("kafka: %w: offset %d of %s/%d is past the high watermark %d",
				outage.ErrUnavailable, r.next, r.topic, r.partition, o.HighWatermark)
		case retryable(fp.Err):
			r.refresh = true
			if !sleep(ctx, 50*time.Millisecond) {
				return nil, nil
			}
			continue
		default:
			return nil, unavailable(fp.Err)
		}
		moved := next > r.next
		if moved {
			r.next = next
		}
		if len(fp.Records) > 0 {
			return fp.Records, nil
		}
		if moved {
			continue // batches of aborted transactions only: read on
		}
		if fromIdle {
			// The idle answer held a batch but no progress: a batch cut
			// at the partition's limit in a fetch of many partitions.
			// The reader's own fetch returns at least one whole batch.
			continue
		}
		// Caught up: wait in the idle fetch.
		if parked, err = r.park(ctx); err != nil || ctx.Err() != nil {
			return nil, err
		}
	}
}

// park parks the partition at r.next in the Client's idle fetch and waits
// for its answer: the partition's part of a fetch response, or nil when
// the reader must fetch itself. It returns (nil, nil) when ctx ends.
func (r *Reader) park(ctx context.Context) (*kmsg.FetchResponseTopicPartition, error) {
	answer, err := r.c.idle.park(r, r.next)
	if err != nil {
		return nil, err
	}
	select {
	case rp := <-answer:
		return rp, nil
	case <-ctx.Done():
		r.c.idle.unpark(r)
		return nil, nil
	}
}

// Close stops the reader and waits for its fetch loop.
func (r *Reader) Close() {
	r.cancel()
	r.start.Do(func() { close(r.done) }) // never started
	<-r.done
	r.cl.Close()
}
