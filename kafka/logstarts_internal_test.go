package kafka

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestLogStartsPerTopic: a topic whose partitions fail (here: an
// error from the broker for each of them) is reported on its own; the other topics' log start offsets
// still come back, and a topic Kafka does not know is in neither.
func TestLogStartsPerTopic(t *testing.T) {
	ctx := context.Background()
	kf, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "good", "bad"))
	require.NoError(t, err)
	defer kf.Close()
	kc, err := New(Config{Brokers: kf.ListenAddrs()})
	require.NoError(t, err)
	defer kc.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(kf.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer cl.Close()
	for p := int32(0); p < 2; p++ {
		for range 3 {
			require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Topic: "good", Partition: p, Value: []byte("v")}).FirstErr())
		}
	}
	require.NoError(t, kf.DeleteRecords("good", 1, 2))
	kf.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.ListOffsets}, Topic: "bad", Err: kerr.KafkaStorageError, Count: -1})

	starts, errs, err := kc.LogStarts(ctx, []string{"good", "bad", "gone"})
	require.NoError(t, err)
	require.Equal(t, map[string]map[int32]int64{"good": {0: 0, 1: 2}}, starts)
	require.Len(t, errs, 1)
	require.ErrorIs(t, errs["bad"], kerr.KafkaStorageError)
}

// TestLogStartsBrokerDown: when the broker that leads one topic's
// partitions does not answer, the topics of the other brokers still come
// back and that topic alone is reported.
func TestLogStartsBrokerDown(t *testing.T) {
	ctx := context.Background()
	kf, err := kfake.NewCluster(kfake.NumBrokers(2), kfake.SeedTopics(1, "good", "bad"))
	require.NoError(t, err)
	defer kf.Close()
	kc, err := New(Config{Brokers: kf.ListenAddrs()})
	require.NoError(t, err)
	defer kc.Close()
	down := 1 - kf.LeaderFor("good", 0)
	require.NoError(t, kf.MoveTopicPartition("bad", 0, down))
	kf.ControlKey(int16(kmsg.ListOffsets), func(kmsg.Request) (kmsg.Response, error, bool) {
		kf.KeepControl()
		if kf.CurrentNode() == down {
			return nil, errors.New("broker down"), true
		}
		return nil, nil, false
	})

	starts, errs, err := kc.LogStarts(ctx, []string{"good", "bad"})
	require.NoError(t, err)
	require.Equal(t, map[string]map[int32]int64{"good": {0: 0}}, starts)
	require.Len(t, errs, 1)
	require.Error(t, errs["bad"])
}
