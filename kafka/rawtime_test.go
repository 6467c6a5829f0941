package kafka_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/internal/kafkatest"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/kafka"
)

// goldenMillis are record timestamps (ms) that int64 nanoseconds cannot
// hold, and their neighbours: no timestamp (-1), the epoch, the largest
// instant of 2262 that nanoseconds hold and the next one, 9999-12-31
// 23:59:59.999, the largest and smallest timestamps Iceberg's microseconds
// hold and the ones just past them, and the int64 extremes.
var goldenMillis = []int64{
	-1, 0, 9223372036854, 9223372036855, 253402300799999,
	9223372036854775, 9223372036854776, -9223372036854775, -9223372036854776,
	math.MaxInt64, math.MinInt64,
}

// TestTimestampsExact produces batches whose records carry goldenMillis
// (uncompressed, gzip, lz4 and zstd) and reads them back through ReadRange
// and through a Reader: every record's timestamp is its raw value, and the
// two paths agree record for record.
func TestTimestampsExact(t *testing.T) {
	ctx := context.Background()
	k := testkit.NewKafka(t, kfake.SeedTopics(1, "t"))
	kc, cl := k.Client, k.Producer(t)

	var want []int64
	for _, codec := range []kgo.CompressionCodec{kgo.NoCompression(), kgo.GzipCompression(), kgo.Lz4Compression(), kgo.ZstdCompression()} {
		var recs []kafkatest.Record
		for _, ms := range goldenMillis {
			recs = append(recs, kafkatest.Record{Millis: ms, Value: []byte("v")})
		}
		_, err := kafkatest.ProduceBatch(ctx, cl, "t", 0, kafkatest.Batch{Compression: codec}, recs...)
		require.NoError(t, err)
		want = append(want, goldenMillis...)
	}
	// One record per batch too: FirstTimestamp itself is the value.
	for _, ms := range goldenMillis {
		_, err := kafkatest.ProduceBatch(ctx, cl, "t", 0, kafkatest.Batch{}, kafkatest.Record{Millis: ms})
		require.NoError(t, err)
		want = append(want, ms)
	}
	n := int64(len(want))

	millis := func(recs []*kgo.Record) []int64 {
		out := make([]int64, len(recs))
		for i, r := range recs {
			require.Equal(t, int64(i), r.Offset)
			require.Equal(t, int8(0), r.Attrs.TimestampType(), "CreateTime")
			out[i] = r.Timestamp.UnixMilli()
		}
		return out
	}
	got, err := kc.ReadRange(ctx, "t", 0, 0, n)
	require.NoError(t, err)
	require.Equal(t, want, millis(got), "ReadRange")

	rd, err := kc.NewReader("t", 0, 0)
	require.NoError(t, err)
	defer rd.Close()
	var polled []*kgo.Record
	for int64(len(polled)) < n {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		recs, err := rd.Poll(pctx)
		cancel()
		require.NoError(t, err)
		require.NotEmpty(t, recs)
		polled = append(polled, recs...)
	}
	require.Equal(t, want, millis(polled), "Reader")
	require.Equal(t, kafka.Offsets{LogStart: 0, LastStable: n, HighWatermark: n}, rd.Offsets())
}
