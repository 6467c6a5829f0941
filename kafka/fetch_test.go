package kafka_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/kafka"
)

// values returns the values of recs as strings, with their offsets.
func values(recs []*kgo.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = fmt.Sprintf("%d:%s", r.Offset, r.Value)
	}
	return out
}

// TestReadRange reads offset ranges back over the wire: ranges inside
// and across produce batches, ranges with an aborted transaction and its
// control records, a range past the high watermark, two brokers (fetches
// go to the leader) and a range whose head was deleted.
func TestReadRange(t *testing.T) {
	ctx := context.Background()
	k := testkit.NewKafka(t, kfake.NumBrokers(2), kfake.SeedTopics(2, "t"))
	kf, kc := k.Cluster, k.Client
	cl := k.Producer(t, kgo.DefaultProduceTopic("t"), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.TransactionalID("tx"))
	produce := func(p int32, vals ...string) {
		var recs []*kgo.Record
		for _, v := range vals {
			recs = append(recs, &kgo.Record{Partition: p, Value: []byte(v)})
		}
		require.NoError(t, cl.BeginTransaction())
		require.NoError(t, cl.ProduceSync(ctx, recs...).FirstErr())
		require.NoError(t, cl.EndTransaction(ctx, kgo.TryCommit))
	}
	// Partition 0: a0 a1 a2 | commit marker 3 | b4..b5 | marker 6 |
	// aborted c7 c8 | abort marker 9 | d10 | marker 11.
	produce(0, "a0", "a1", "a2")
	produce(0, "b4", "b5")
	require.NoError(t, cl.BeginTransaction())
	require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Partition: 0, Value: []byte("c7")}, &kgo.Record{Partition: 0, Value: []byte("c8")}).FirstErr())
	require.NoError(t, cl.EndTransaction(ctx, kgo.TryAbort))
	produce(0, "d10")

	for _, tc := range []struct {
		start, end int64
		want       []string
	}{
		{0, 12, []string{"0:a0", "1:a1", "2:a2", "4:b4", "5:b5", "10:d10"}},
		{1, 2, []string{"1:a1"}},
		{2, 5, []string{"2:a2", "4:b4"}},
		{3, 4, []string{}},  // a commit marker only
		{6, 10, []string{}}, // aborted records and markers only
		{7, 11, []string{"10:d10"}},
		{5, 40, []string{"5:b5", "10:d10"}}, // past the high watermark
		{12, 20, []string{}},
	} {
		got, err := kc.ReadRange(ctx, "t", 0, tc.start, tc.end)
		require.NoError(t, err)
		require.Equal(t, tc.want, values(got), "[%d, %d)", tc.start, tc.end)
	}

	// Partition 1 on the other broker: many batches, one read.
	var want []string
	for i := 0; i < 50; i++ {
		produce(1, fmt.Sprintf("x%d", 2*i))
		want = append(want, fmt.Sprintf("%d:x%d", 2*i, 2*i))
	}
	got, err := kc.ReadRange(ctx, "t", 1, 0, 100)
	require.NoError(t, err)
	require.Equal(t, want, values(got))

	// Delete the head of partition 1: a range starting below the log
	// start offset returns what Kafka still holds.
	require.NoError(t, kf.DeleteRecords("t", 1, 40))
	got, err = kc.ReadRange(ctx, "t", 1, 30, 46)
	require.NoError(t, err)
	require.Equal(t, []string{"40:x40", "42:x42", "44:x44"}, values(got))
	got, err = kc.ReadRange(ctx, "t", 1, 0, 40)
	require.NoError(t, err)
	require.Empty(t, got)

	_, err = kc.ReadRange(ctx, "nope", 0, 0, 10)
	require.ErrorIs(t, err, kafka.ErrUnknownTopic)
}

// TestReadRangeFetchAhead reads ranges of several fetches each (ReadRange
// sends the next fetch while it parses one): the records are those of the
// committed transactions, in order, across an aborted transaction and the
// control records, from inside the range too, and from below the log
// start offset after a deletion.
func TestReadRangeFetchAhead(t *testing.T) {
	ctx := context.Background()
	k := testkit.NewKafka(t, kfake.NumBrokers(1), kfake.SeedTopics(1, "big"))
	kf, kc := k.Cluster, k.Client
	cl := k.Producer(t, kgo.DefaultProduceTopic("big"), kgo.TransactionalID("txbig"))
	rng := rand.New(rand.NewPCG(1, 2))
	value := func(i int) []byte {
		// Incompressible, so that the batches are as large as the values.
		v := make([]byte, 64<<10)
		for j := range v {
			v[j] = byte(1 + rng.IntN(255))
		}
		copy(v, fmt.Sprintf("v%d", i))
		v[len(fmt.Sprintf("v%d", i))] = 0
		return v
	}
	var want []string
	next := int64(0)
	// Four transactions of 40 values of 64 KiB (2.5 MiB each, a fetch is
	// 2 MiB at most); the third is aborted.
	for tx := 0; tx < 4; tx++ {
		var recs []*kgo.Record
		for i := 0; i < 40; i++ {
			recs = append(recs, &kgo.Record{Value: value(tx*40 + i)})
		}
		require.NoError(t, cl.BeginTransaction())
		require.NoError(t, cl.ProduceSync(ctx, recs...).FirstErr())
		commit := kgo.TryCommit
		if tx == 2 {
			commit = kgo.TryAbort
		}
		require.NoError(t, cl.EndTransaction(ctx, commit))
		for _, r := range recs {
			if tx != 2 {
				want = append(want, fmt.Sprintf("%d:v%d", r.Offset, tx*40+int(r.Offset-next)))
			}
		}
		next = recs[len(recs)-1].Offset + 2 // after the marker
	}
	short := func(recs []*kgo.Record) []string {
		out := make([]string, len(recs))
		for i, r := range recs {
			out[i] = fmt.Sprintf("%d:%s", r.Offset, string(r.Value[:bytesIndexZero(r.Value)]))
		}
		return out
	}
	got, err := kc.ReadRange(ctx, "big", 0, 0, next)
	require.NoError(t, err)
	require.Equal(t, want, short(got))
	// From inside the first transaction to inside the last.
	got, err = kc.ReadRange(ctx, "big", 0, 25, next-10)
	require.NoError(t, err)
	require.Equal(t, want[25:len(want)-9], short(got))
	// Below the log start offset: what Kafka still holds.
	require.NoError(t, kf.DeleteRecords("big", 0, 60))
	got, err = kc.ReadRange(ctx, "big", 0, 0, next)
	require.NoError(t, err)
	require.Equal(t, want[59:], short(got))
}

func bytesIndexZero(b []byte) int {
	for i, c := range b {
		if c == 0 {
			return i
		}
	}
	return len(b)
}
