package indexer

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestRangeBuffer: when a partition's records are cut into a range
// (docs/design.md §4.3): at the range size, at the flush interval after the
// first record, and before a record that would take the node's indexers
// past their memory budget.
func TestRangeBuffer(t *testing.T) {
	rec := func(n int) *kgo.Record { return &kgo.Record{Key: make([]byte, 1), Value: make([]byte, n-1)} }
	t0 := time.Unix(1000, 0)
	var b rangeBuffer
	require.Equal(t, idleWait, b.wait(t0, 2*time.Second), "nothing held: wait long for records")
	require.False(t, b.due(t0.Add(time.Hour), 2*time.Second), "nothing held: nothing to cut")
	require.False(t, b.overBudget(recordCost(rec(10)), 1<<40, 100), "an empty buffer takes a record past the budget")

	require.Equal(t, int64(10+recordOverhead), b.add(rec(10), t0))
	b.add(rec(10), t0.Add(time.Second))
	require.Equal(t, int64(20+2*recordOverhead), b.cost)
	require.Equal(t, int64(20), b.bytes)
	require.Equal(t, t0, b.firstAt, "the flush interval runs from the first record")
	require.False(t, b.full(21))
	require.True(t, b.full(20))

	require.Equal(t, 500*time.Millisecond, b.wait(t0.Add(1500*time.Millisecond), 2*time.Second))
	require.LessOrEqual(t, b.wait(t0.Add(3*time.Second), 2*time.Second), time.Duration(0), "past the interval: cut before waiting")
	require.False(t, b.due(t0.Add(1999*time.Millisecond), 2*time.Second))
	require.True(t, b.due(t0.Add(2*time.Second), 2*time.Second))

	cost := recordCost(rec(10))
	require.False(t, b.overBudget(cost, 1000-cost, 1000), "exactly at the budget: no cut")
	require.True(t, b.overBudget(cost, 1000-cost+1, 1000), "past the budget: cut what is held first")

	b.reset()
	require.Empty(t, b.records)
	require.Zero(t, b.bytes+b.cost)
	b.add(rec(5), t0.Add(time.Minute))
	require.Equal(t, t0.Add(time.Minute), b.firstAt, "a new range's interval runs from its own first record")
}

// TestRangeBufferReset: a cut range's records are let go (no pointer to
// them is kept) while the slice keeps its capacity for the next range.
func TestRangeBufferReset(t *testing.T) {
	var b rangeBuffer
	t0 := time.Unix(1000, 0)
	for i := range 100 {
		b.add(&kgo.Record{Offset: int64(i), Value: []byte("v")}, t0)
	}
	held := b.records[:100]
	b.reset()
	require.Empty(t, b.records)
	require.GreaterOrEqual(t, cap(b.records), 100, "capacity kept for the next range")
	for i, r := range held {
		require.Nil(t, r, "record %d still referenced after the cut", i)
	}
	require.Zero(t, b.bytes+b.cost)
	require.True(t, b.firstAt.IsZero())
	b.add(&kgo.Record{Offset: 99, Attrs: kgo.NewRecordAttrs(kgo.RecordAttrsOpts{Control: true})}, t0)
	require.True(t, b.control, "a control record is noted: the cut leaves it out")
	b.reset()
	require.False(t, b.control)
	b.add(&kgo.Record{Offset: 100, Value: []byte("w")}, t0.Add(time.Minute))
	require.Equal(t, int64(100), b.records[0].Offset)
	require.Equal(t, t0.Add(time.Minute), b.firstAt)
}
