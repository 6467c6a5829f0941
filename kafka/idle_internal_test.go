package kafka

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// idleKafka starts a kfake cluster with topic of partitions and returns it
// with a Client on it.
func idleKafka(t *testing.T, topic string, partitions int32) (*kfake.Cluster, *Client) {
	kf, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, topic))
	require.NoError(t, err)
	t.Cleanup(kf.Close)
	kc, err := New(Config{Brokers: kf.ListenAddrs()})
	require.NoError(t, err)
	t.Cleanup(kc.Close)
	return kf, kc
}

// waitParked waits until n readers are parked in kc's idle fetch.
func waitParked(t *testing.T, kc *Client, n int) {
	t.Helper()
	require.Eventually(t, func() bool {
		kc.idle.mu.Lock()
		defer kc.idle.mu.Unlock()
		return len(kc.idle.parked) == n
	}, 10*time.Second, 5*time.Millisecond, "readers parked")
}

// pollUntil polls r until it returned a record at offset end-1 or later
// and returns every record, control records included.
func pollUntil(t *testing.T, r *Reader, end int64) []*kgo.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out []*kgo.Record
	for len(out) == 0 || out[len(out)-1].Offset < end-1 {
		recs, err := r.Poll(ctx)
		require.NoError(t, err)
		require.NoError(t, ctx.Err(), "records up to offset %d", end-1)
		out = append(out, recs...)
	}
	return out
}

// data returns the data records of recs as "offset:value@timestamp".
func data(recs []*kgo.Record) []string {
	var out []string
	for _, r := range recs {
		if !r.Attrs.IsControl() {
			out = append(out, fmt.Sprintf("%d:%s@%d", r.Offset, r.Value, r.Timestamp.UnixMilli()))
		}
	}
	return out
}

// TestReaderParked: a reader that caught up parks its partition in the
// idle fetch and gets the next records from it exactly as ReadRange
// returns them (offsets, values, timestamps), across an aborted
// transaction and its markers, and, when the log start offset moved past
// it while it was parked, goes on from the log start offset.
func TestReaderParked(t *testing.T) {
	ctx := context.Background()
	kf, kc := idleKafka(t, "p", 1)
	cl, err := kgo.NewClient(kgo.SeedBrokers(kf.ListenAddrs()...), kgo.DefaultProduceTopic("p"),
		kgo.TransactionalID("tx"))
	require.NoError(t, err)
	defer cl.Close()
	txn := func(commit kgo.TransactionEndTry, vals ...string) {
		require.NoError(t, cl.BeginTransaction())
		for _, v := range vals {
			require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Value: []byte(v)}).FirstErr())
		}
		require.NoError(t, cl.EndTransaction(ctx, commit))
	}
	txn(kgo.TryCommit, "a0", "a1") // marker 2
	r, err := kc.NewReader("p", 0, 0)
	require.NoError(t, err)
	defer r.Close()
	got := pollUntil(t, r, 3)
	waitParked(t, kc, 1)

	// While parked: an aborted transaction (c3 c4, marker 5) and a
	// committed one (d6, marker 7).
	txn(kgo.TryAbort, "c3", "c4")
	txn(kgo.TryCommit, "d6")
	got = append(got, pollUntil(t, r, 8)...)
	want, err := kc.ReadRange(ctx, "p", 0, 0, 8)
	require.NoError(t, err)
	require.Equal(t, data(want), data(got))
	require.Equal(t, []string{"0:a0", "1:a1", "6:d6"}, values(data(got)))
	require.Equal(t, int64(8), r.Offsets().HighWatermark)
	waitParked(t, kc, 1)

	// Hold the idle fetch at the broker while records come and the head
	// of the partition is deleted past the reader's offset (8).
	release, sleeping := make(chan struct{}), make(chan struct{})
	var held sync.Once
	kf.ControlKey(int16(kmsg.Fetch), func(req kmsg.Request) (kmsg.Response, error, bool) {
		kf.KeepControl()
		if req.(*kmsg.FetchRequest).MaxWaitMillis == int32(idleMaxWait/time.Millisecond) {
			held.Do(func() {
				close(sleeping)
				kf.SleepControl(func() { <-release })
			})
		}
		return nil, nil, false
	})
	<-sleeping
	txn(kgo.TryCommit, "e8", "e9") // marker 10
	txn(kgo.TryCommit, "f11")      // marker 12
	require.NoError(t, kf.DeleteRecords("p", 0, 11))
	close(release)
	after := pollUntil(t, r, 13)
	require.Equal(t, []string{"11:f11"}, values(data(after)))
	want, err = kc.ReadRange(ctx, "p", 0, 8, 13)
	require.NoError(t, err)
	require.Equal(t, data(want), data(after))
}

// values drops the timestamps of data's strings.
func values(ds []string) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		v, _, _ := cutLast(d, '@')
		out[i] = v
	}
	return out
}

func cutLast(s string, c byte) (string, string, bool) {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == c {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// TestIdleFetchOneRequest: many caught-up readers cost one Fetch request
// per broker for all of them, and the one whose partition gets a record
// reads it.
func TestIdleFetchOneRequest(t *testing.T) {
	ctx := context.Background()
	const n = 20
	kf, kc := idleKafka(t, "many", n)
	cl, err := kgo.NewClient(kgo.SeedBrokers(kf.ListenAddrs()...), kgo.DefaultProduceTopic("many"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer cl.Close()
	readers := make([]*Reader, n)
	for p := range int32(n) {
		require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Partition: p, Value: fmt.Appendf(nil, "first of %d", p)}).FirstErr())
		r, err := kc.NewReader("many", p, 0)
		require.NoError(t, err)
		defer r.Close()
		readers[p] = r
		require.Len(t, pollUntil(t, r, 1), 1)
	}
	waitParked(t, kc, n)

	// Once a fetch for all n partitions came (the request in flight when
	// the hook was added may be for the first partitions that parked),
	// every fetch the broker gets is the idle fetch's, for all n.
	var mu sync.Mutex
	var sizes []int
	kf.ControlKey(int16(kmsg.Fetch), func(req kmsg.Request) (kmsg.Response, error, bool) {
		kf.KeepControl()
		parts := 0
		for _, rt := range req.(*kmsg.FetchRequest).Topics {
			parts += len(rt.Partitions)
		}
		mu.Lock()
		sizes = append(sizes, parts)
		mu.Unlock()
		return nil, nil, false
	})
	var got []int
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		i := slices.Index(sizes, n)
		if i < 0 {
			return false
		}
		got = slices.Clone(sizes[i:])
		return len(got) >= 3
	}, 10*time.Second, 10*time.Millisecond)
	got = got[:3]
	require.Equal(t, []int{n, n, n}, got)

	require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Partition: 7, Value: []byte("second of 7")}).FirstErr())
	recs := pollUntil(t, readers[7], 2)
	require.Equal(t, []string{"1:second of 7"}, values(data(recs)))
	waitParked(t, kc, n)
}

// TestReaderCutBatch: when the idle fetch's answer for a partition is a
// record batch cut at the partition's byte limit (a batch larger than it,
// behind another partition's data in the same response), the reader makes
// no progress from it and reads the batch with a fetch of its own instead
// of parking again at the same offset.
func TestReaderCutBatch(t *testing.T) {
	ctx := context.Background()
	kf, kc := idleKafka(t, "cut", 1)
	cl, err := kgo.NewClient(kgo.SeedBrokers(kf.ListenAddrs()...), kgo.DefaultProduceTopic("cut"))
	require.NoError(t, err)
	defer cl.Close()
	require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Value: []byte("a0")}).FirstErr())
	r, err := kc.NewReader("cut", 0, 0)
	require.NoError(t, err)
	defer r.Close()
	pollUntil(t, r, 1)
	waitParked(t, kc, 1)

	// Every idle fetch now answers with the head of a batch at offset 1
	// whose length runs past the bytes sent.
	cut := make([]byte, 30)
	cut[7] = 1                                    // base offset 1
	cut[8], cut[9], cut[10], cut[11] = 0, 0, 4, 0 // length 1024
	kf.ControlKey(int16(kmsg.Fetch), func(req kmsg.Request) (kmsg.Response, error, bool) {
		kf.KeepControl()
		fr := req.(*kmsg.FetchRequest)
		if fr.MaxWaitMillis != int32(idleMaxWait/time.Millisecond) {
			return nil, nil, false
		}
		resp := fr.ResponseKind().(*kmsg.FetchResponse)
		resp.Version = fr.Version
		for _, rt := range fr.Topics {
			st := kmsg.NewFetchResponseTopic()
			st.Topic, st.TopicID = rt.Topic, rt.TopicID
			for _, rp := range rt.Partitions {
				sp := kmsg.NewFetchResponseTopicPartition()
				sp.Partition = rp.Partition
				sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = 2, 2, 0
				sp.RecordBatches = cut
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
	require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Value: []byte("b1")}).FirstErr())
	require.Equal(t, []string{"1:b1"}, values(data(pollUntil(t, r, 2))))
}

// TestIdleFetchHungBroker: a broker that holds the idle fetch without
// answering does not hold up the partitions of the other brokers: each
// idle request is bounded to idleMaxWait plus idleMargin.
func TestIdleFetchHungBroker(t *testing.T) {
	ctx := context.Background()
	kf, err := kfake.NewCluster(kfake.NumBrokers(2), kfake.SeedTopics(2, "hung"))
	require.NoError(t, err)
	defer kf.Close()
	kc, err := New(Config{Brokers: kf.ListenAddrs()})
	require.NoError(t, err)
	defer kc.Close()
	require.NoError(t, kf.MoveTopicPartition("hung", 1, 1-kf.LeaderFor("hung", 0)))
	hung := kf.LeaderFor("hung", 0)
	require.NotEqual(t, hung, kf.LeaderFor("hung", 1))
	cl, err := kgo.NewClient(kgo.SeedBrokers(kf.ListenAddrs()...), kgo.DefaultProduceTopic("hung"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer cl.Close()
	readers := make([]*Reader, 2)
	for p := range int32(2) {
		require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Partition: p, Value: []byte("first")}).FirstErr())
		readers[p], err = kc.NewReader("hung", p, 0)
		require.NoError(t, err)
		defer readers[p].Close()
		pollUntil(t, readers[p], 1)
	}
	waitParked(t, kc, 2)

	// From now on the leader of partition 0 holds every idle fetch.
	release := make(chan struct{})
	defer close(release)
	kf.ControlKey(int16(kmsg.Fetch), func(req kmsg.Request) (kmsg.Response, error, bool) {
		kf.KeepControl()
		if req.(*kmsg.FetchRequest).MaxWaitMillis == int32(idleMaxWait/time.Millisecond) && kf.CurrentNode() == hung {
			kf.SleepControl(func() { <-release })
		}
		return nil, nil, false
	})
	for i := range 3 {
		v := fmt.Sprintf("next%d", i)
		require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Partition: 1, Value: []byte(v)}).FirstErr())
		got := pollUntil(t, readers[1], int64(2+i))
		require.Equal(t, []string{fmt.Sprintf("%d:%s", 1+i, v)}, values(data(got)))
	}
}
