package indexer_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/indexer"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/tables"
)

// TestMemoryBudgetCutsRangesEarly: with a 100 KiB budget across four
// partitions and a range size far above their 200 KiB backlogs (which,
// unbounded, would each become one range at the flush interval), indexers
// cut small ranges rather than hold more: every range stays within the
// budget, the ranges tile each partition, and the buffer gauge returns to
// zero.
func TestMemoryBudgetCutsRangesEarly(t *testing.T) {
	const partitions, perPartition, budget = 4, 200, 100 << 10
	f := testkit.NewFixture(t, partitions, tables.Definition{Namespace: "t", Name: "m", Topic: "m", ValueFormat: "raw"})
	value := strings.Repeat("v", 1000)
	for p := int32(0); p < partitions; p++ {
		vals := make([]string, perPartition)
		for i := range vals {
			vals[i] = value
		}
		f.ProduceTo(t, p, vals...)
	}
	reg := prometheus.NewRegistry()
	ix := indexer.New(f.Pool, f.Client, indexer.Config{FlushInterval: 3 * time.Second, RangeSize: 16 << 20,
		MemoryBudget: budget, Registerer: reg})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, partitions)
	for p := int32(0); p < partitions; p++ {
		l := f.Take(t, tables.PartitionScope(f.Table.ID, p), "node-a")
		go func() { done <- ix.Run(ctx, l) }()
	}
	for p := int32(0); p < partitions; p++ {
		testkit.WaitFor(t, "the backlog indexed", func() bool { return indexedEnd(t, f, p) == perPartition })
	}

	rows, err := f.Pool.Query(context.Background(), `
		SELECT partition, start_offset, end_offset, record_count FROM ranges WHERE table_id = $1 ORDER BY partition, start_offset`, f.Table.ID)
	require.NoError(t, err)
	next := map[int32]int64{}
	n := 0
	for rows.Next() {
		var p int32
		var s, e, c int64
		require.NoError(t, rows.Scan(&p, &s, &e, &c))
		require.Equal(t, next[p], s, "partition %d: ranges tile the offsets", p)
		next[p] = e
		// A range holds at most the budget plus the record that passed it.
		require.LessOrEqual(t, c*(1000+200), int64(budget+1200), "range [%d, %d) of partition %d", s, e, p)
		n++
	}
	require.NoError(t, rows.Err())
	require.Greater(t, n, 2*partitions, "ranges were cut early")
	// The gauge drops just after a range's transaction commits.
	testkit.WaitFor(t, "nothing held once the backlog is cut", func() bool {
		v, ok := testkit.MetricValue(t, reg, "mink_index_buffer_bytes")
		return ok && v == 0
	})
	cancel()
	for p := 0; p < partitions; p++ {
		require.NoError(t, <-done)
	}
}
