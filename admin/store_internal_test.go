package admin

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/commit"
	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/kafka"
	"github.com/minkhq/mink/tables"
)

// The committed offset the API shows is the lesser content end of the
// table and its dead-letter table, from the statement commits read their
// content ends with: status and loads cannot disagree.
func TestCommittedOffsets(t *testing.T) {
	pool, _ := pgtest.Pool(t)
	ctx := context.Background()
	tb, err := tables.Create(ctx, pool, "mink", tables.Definition{Namespace: "app", Name: "t", Topic: "t", ValueFormat: "raw"},
		[]tables.PartitionStart{{Partition: 0, Offset: 10}, {Partition: 1, Offset: 10}, {Partition: 2, Offset: 10}})
	require.NoError(t, err)
	dlq, err := tables.DLQ(ctx, pool, tb.ID)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `INSERT INTO content_ends (table_id, partition, end_offset) VALUES ($1, 0, 50), ($2, 0, 30), ($1, 1, 40)`,
		tb.ID, dlq.ID)
	require.NoError(t, err)

	parts, err := readProgress(ctx, pool, tb)
	require.NoError(t, err)
	committed := map[int32]int64{}
	for _, p := range parts {
		committed[p.Partition] = p.CommittedOffset
	}
	require.Equal(t, map[int32]int64{0: 30, 1: 10, 2: 10}, committed)

	h, err := commit.Read(ctx, pool, tb, tb)
	require.NoError(t, err)
	require.Equal(t, map[int32]int64{0: 50, 1: 40, 2: 10}, h.Ends, "the table's own content ends")
	h, err = commit.Read(ctx, pool, dlq, tb)
	require.NoError(t, err)
	require.Equal(t, map[int32]int64{0: 30, 1: 10, 2: 10}, h.Ends, "the dead-letter table's")

	parts, err = readProgress(ctx, pool, dlq)
	require.NoError(t, err)
	require.Nil(t, parts, "a dead-letter table owns no partitions")
}

func TestMergeUnknownFields(t *testing.T) {
	require.Equal(t, UnknownFieldsStatus{Examples: []string{}}, mergeUnknownFields(nil))
	many := []string{"x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9"}
	require.Equal(t, UnknownFieldsStatus{Count: 15, Examples: append([]string{"b", "a"}, many[:8]...)},
		mergeUnknownFields([]partitionUnknownFields{{count: 3, examples: []string{"b", "a"}}, {count: 12, examples: append([]string{"a"}, many...)}}))
}

func TestWithKafkaOffsets(t *testing.T) {
	parts := []PartitionStatus{{Partition: 0, IndexedOffset: 90}, {Partition: 1, IndexedOffset: 120}, {Partition: 2, IndexedOffset: 5}}
	withKafkaOffsets(parts, map[int32]kafka.Offsets{0: {LogStart: 1, LastStable: 100, HighWatermark: 101}, 1: {LastStable: 100, HighWatermark: 100}})
	require.Equal(t, []PartitionStatus{
		{Partition: 0, IndexedOffset: 90, LogStartOffset: 1, LastStable: 100, HighWatermark: 101, Lag: 10},
		{Partition: 1, IndexedOffset: 120, LastStable: 100, HighWatermark: 100, Lag: 0},
		{Partition: 2, IndexedOffset: 5},
	}, parts)
}
