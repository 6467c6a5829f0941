package kafka

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minkhq/mink/outage"
)

// TestOffsetsRetryPartitionErrors: ListOffsets and LastStableOffsets
// answer through a partition error Kafka calls retriable (a leader that
// moved, as a real broker answers just after a topic is created), which
// franz-go does not retry itself; an error that is not retriable is
// returned at once, as unavailable.
func TestOffsetsRetryPartitionErrors(t *testing.T) {
	ctx := context.Background()
	kf, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "t"))
	require.NoError(t, err)
	defer kf.Close()
	kc, err := New(Config{Brokers: kf.ListenAddrs()})
	require.NoError(t, err)
	defer kc.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(kf.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer cl.Close()
	for range 3 {
		require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Topic: "t", Partition: 1, Value: []byte("v")}).FirstErr())
	}

	kf.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.ListOffsets}, Topic: "t", Err: kerr.NotLeaderForPartition, Count: 4})
	offs, err := kc.ListOffsets(ctx, "t")
	require.NoError(t, err)
	require.Equal(t, map[int32]Offsets{0: {}, 1: {HighWatermark: 3, LastStable: 3}}, offs)

	kf.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.ListOffsets}, Topic: "t", Err: kerr.LeaderNotAvailable, Count: 2})
	stable, err := kc.LastStableOffsets(ctx, "t")
	require.NoError(t, err)
	require.Equal(t, map[int32]int64{0: 0, 1: 3}, stable)

	kf.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.ListOffsets}, Topic: "t", Err: kerr.TopicAuthorizationFailed, Count: 1})
	start := time.Now()
	_, err = kc.LastStableOffsets(ctx, "t")
	require.ErrorIs(t, err, outage.ErrUnavailable)
	require.ErrorIs(t, err, kerr.TopicAuthorizationFailed)
	require.Less(t, time.Since(start), time.Second, "a non-retriable error is not retried")
}
