package kafka_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/kafka"
)

// TestReaderRecycle: a Reader's records recycled as soon as they are read
// give their memory to later fetches, and every later record still reads
// back its own offset, value and timestamp (snappy-compressed batches, so
// the decompression buffers are pooled too). Records of ReadRange are not
// pooled: Recycle leaves them as they are.
func TestReaderRecycle(t *testing.T) {
	ctx := context.Background()
	k := testkit.NewKafka(t, kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	cl := k.Producer(t, kgo.DefaultProduceTopic("t"), kgo.ProducerBatchCompression(kgo.SnappyCompression()),
		kgo.ProducerLinger(time.Millisecond))
	const n = 5000
	ts := time.UnixMilli(1_700_000_000_000)
	value := func(i int) string { return fmt.Sprintf("value %d %0100d", i, i) }
	for round := range 5 {
		var recs []*kgo.Record
		for i := round * n / 5; i < (round+1)*n/5; i++ {
			recs = append(recs, &kgo.Record{Value: []byte(value(i)), Timestamp: ts.Add(time.Duration(i) * time.Millisecond)})
		}
		require.NoError(t, cl.ProduceSync(ctx, recs...).FirstErr())
	}

	r, err := k.Client.NewReader("t", 0, 0)
	require.NoError(t, err)
	defer r.Close()
	next := int64(0)
	for next < n {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		recs, err := r.Poll(pctx)
		cancel()
		require.NoError(t, err)
		require.NotEmpty(t, recs, "no records at offset %d", next)
		for _, rec := range recs {
			require.Equal(t, next, rec.Offset)
			require.Equal(t, value(int(next)), string(rec.Value))
			require.Equal(t, ts.Add(time.Duration(next)*time.Millisecond).UnixMilli(), rec.Timestamp.UnixMilli())
			next++
		}
		kafka.Recycle(recs)
		for _, rec := range recs {
			require.Nil(t, rec.Value, "a recycled record lets go of its value")
		}
	}

	got, err := k.Client.ReadRange(ctx, "t", 0, 10, 12)
	require.NoError(t, err)
	kafka.Recycle(got)
	require.Equal(t, []string{"10:" + value(10), "11:" + value(11)}, values(got), "ReadRange's records are not pooled")
}
