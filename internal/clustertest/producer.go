package clustertest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/internal/testkit"
)

// Record is one record Kafka acknowledged.
type Record struct {
	Partition int32
	Offset    int64
	Value     []byte
}

// Produced is the set of acknowledged records of one topic.
type Produced struct {
	Topic   string
	Records []Record
	// Failed counts records whose produce failed: Kafka may or may not
	// have them; their values are in Unsure.
	Failed int
	Unsure map[string]bool
}

// Ends returns, per partition, the offset after the last acknowledged
// record.
func (p Produced) Ends() map[int32]int64 {
	out := map[int32]int64{}
	for _, r := range p.Records {
		out[r.Partition] = max(out[r.Partition], r.Offset+1)
	}
	return out
}

// Producer produces unique values continuously to every partition of a
// topic (round robin, acks from all in-sync replicas, idempotent) and
// records every acknowledged (partition, offset, value).
type Producer struct {
	topic string
	cl    *kgo.Client
	stop  chan struct{}
	done  chan struct{}

	mu      sync.Mutex
	acked   []Record
	failed  int
	unsure  map[string]bool
	lastErr error
}

// StartProducer starts producing about rate records per second to
// partitions 0..partitions-1 of topic. Values are JSON, unique:
// {"n":<sequence>,"v":"<random text of varying length>"}.
func (e *Env) StartProducer(topic string, partitions int, rate int) *Producer {
	e.t.Helper()
	opts := []kgo.Opt{kgo.SeedBrokers(e.Brokers...)}
	if e.Real != nil {
		opts = e.Real.ClientOpts()
	}
	cl, err := kgo.NewClient(append(opts,
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerLinger(5*time.Millisecond))...)
	if err != nil {
		e.t.Fatalf("clustertest: producer: %v", err)
	}
	p := &Producer{topic: topic, cl: cl, stop: make(chan struct{}), done: make(chan struct{}), unsure: map[string]bool{}}
	e.t.Cleanup(func() { p.halt(); cl.Close() })
	go p.run(partitions, rate)
	return p
}

func (p *Producer) run(partitions, rate int) {
	defer close(p.done)
	const tick = 10 * time.Millisecond
	perTick := max(1, rate/int(time.Second/tick))
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	t := time.NewTicker(tick)
	defer t.Stop()
	n := 0
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
		}
		for i := 0; i < perTick; i++ {
			pad := make([]byte, rng.IntN(64))
			for j := range pad {
				pad[j] = 'a' + byte(rng.IntN(26))
			}
			v := []byte(fmt.Sprintf(`{"n":%d,"v":"%x-%s"}`, n, rng.Uint64(), pad))
			rec := &kgo.Record{Topic: p.topic, Partition: int32(n % partitions), Value: v}
			n++
			p.cl.Produce(context.Background(), rec, func(r *kgo.Record, err error) {
				p.mu.Lock()
				defer p.mu.Unlock()
				if err != nil {
					p.failed++
					p.unsure[string(r.Value)] = true
					p.lastErr = err
					return
				}
				p.acked = append(p.acked, Record{Partition: r.Partition, Offset: r.Offset, Value: r.Value})
			})
		}
	}
}

// Count returns how many records were acknowledged so far.
func (p *Producer) Count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.acked)
}

// WaitMore waits until at least n more records than now were acknowledged.
func (p *Producer) WaitMore(t testing.TB, n int, timeout time.Duration) {
	t.Helper()
	target := p.Count() + n
	testkit.Eventually(t, timeout, 20*time.Millisecond, fmt.Sprintf("%d acknowledged records", target), func() (bool, string) {
		c := p.Count()
		return c >= target, fmt.Sprintf("%d acknowledged", c)
	})
}

func (p *Producer) halt() {
	select {
	case <-p.stop:
	default:
		close(p.stop)
	}
	<-p.done
}

// Stop stops producing, waits for every record in flight to be
// acknowledged (or to fail), and returns what Kafka acknowledged.
func (p *Producer) Stop(t testing.TB) Produced {
	t.Helper()
	p.halt()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.cl.Flush(ctx); err != nil {
		t.Fatalf("clustertest: producer flush: %v", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failed > 0 {
		t.Logf("clustertest: %d produce requests failed (last: %v); their records may or may not be in the topic", p.failed, p.lastErr)
	}
	recs := append([]Record(nil), p.acked...)
	sort.Slice(recs, func(i, j int) bool {
		if recs[i].Partition != recs[j].Partition {
			return recs[i].Partition < recs[j].Partition
		}
		return recs[i].Offset < recs[j].Offset
	})
	unsure := map[string]bool{}
	for v := range p.unsure {
		unsure[v] = true
	}
	return Produced{Topic: p.topic, Records: recs, Failed: p.failed, Unsure: unsure}
}
