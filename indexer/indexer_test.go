package indexer_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/indexer"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/pgstore"
	"github.com/minkhq/mink/rangefile"
	"github.com/minkhq/mink/tables"
)

// indexedEnd is the end offset of the last range of the fixture's
// table's partition (0 when none is indexed).
func indexedEnd(t testing.TB, f *testkit.Fixture, partition int32) int64 {
	t.Helper()
	var end int64
	require.NoError(t, f.Pool.QueryRow(context.Background(),
		`SELECT coalesce(max(end_offset), 0) FROM ranges WHERE table_id = $1 AND partition = $2`, f.Table.ID, partition).Scan(&end))
	return end
}

// A stale indexer cannot write: once another node takes the partition
// lease (a higher epoch), Postgres rejects the old holder's next range and
// the old indexer stops with ErrFenced. The new holder resumes exactly at
// the indexed end: no gap, no overlap.
func TestStaleIndexerIsFenced(t *testing.T) {
	f := testkit.NewFixture(t, 1, tables.Definition{Namespace: "t", Name: "s", Topic: "s", ValueFormat: "string"})
	reg := prometheus.NewRegistry()
	ix := indexer.New(f.Pool, f.Client, indexer.Config{FlushInterval: 50 * time.Millisecond, Registerer: reg})
	scope := tables.PartitionScope(f.Table.ID, 0)

	old := f.Take(t, scope, "node-a")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- ix.Run(ctx, old) }()
	f.ProduceTo(t, 0, "a", "b", "c")
	testkit.WaitFor(t, "first range", func() bool { return indexedEnd(t, f, 0) == 3 })

	// node-b takes the lease; node-a does not know yet.
	newer := f.Take(t, scope, "node-b")
	require.Equal(t, old.Epoch+1, newer.Epoch)
	f.ProduceTo(t, 0, "d", "e")
	select {
	case err := <-done:
		require.True(t, errors.Is(err, pgstore.ErrFenced), "old indexer stops fenced, got %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("stale indexer kept running")
	}
	require.EqualValues(t, 3, indexedEnd(t, f, 0), "the stale write left nothing")
	require.Equal(t, 1.0, testkit.CounterValue(t, reg, "mink_fenced_writes_total", "job", "indexer"), "the fenced write is counted")
	require.Equal(t, 0.0, testkit.CounterValue(t, reg, "mink_fenced_writes_total", "job", "writer"))

	go func() { done <- ix.Run(ctx, newer) }()
	testkit.WaitFor(t, "new holder's range", func() bool { return indexedEnd(t, f, 0) == 5 })
	rows, err := f.Pool.Query(context.Background(),
		`SELECT start_offset, end_offset, lease_holder, lease_epoch FROM ranges WHERE table_id = $1 ORDER BY start_offset`, f.Table.ID)
	require.NoError(t, err)
	var got []string
	for rows.Next() {
		var s, e, ep int64
		var h string
		require.NoError(t, rows.Scan(&s, &e, &h, &ep))
		got = append(got, fmt.Sprintf("[%d,%d) %s/%d", s, e, h, ep))
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []string{"[0,3) node-a/1", "[3,5) node-b/2"}, got)
	cancel()
	require.NoError(t, <-done)
	require.Equal(t, 1.0, testkit.CounterValue(t, reg, "mink_fenced_writes_total", "job", "indexer"), "the new holder was not fenced")
}

// Ranges are cut at the target size, even inside one fetch, and by the
// flush interval for a trickle; they tile the offsets with no gap.
func TestRangesCutBySizeAndInterval(t *testing.T) {
	f := testkit.NewFixture(t, 1, tables.Definition{Namespace: "t", Name: "c", Topic: "c", ValueFormat: "raw"})
	ix := indexer.New(f.Pool, f.Client, indexer.Config{FlushInterval: 300 * time.Millisecond, RangeSize: 250})
	l := f.Take(t, tables.PartitionScope(f.Table.ID, 0), "node-a")
	var vals []string
	for i := 0; i < 10; i++ {
		vals = append(vals, string(make([]byte, 100)))
	}
	f.ProduceTo(t, 0, vals...) // one fetch of 1,000 bytes: ranges of 3 records
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ix.Run(ctx, l) }()
	testkit.WaitFor(t, "10 records", func() bool { return indexedEnd(t, f, 0) == 10 })
	f.ProduceTo(t, 0, "x") // a trickle: cut by the flush interval
	testkit.WaitFor(t, "11 records", func() bool { return indexedEnd(t, f, 0) == 11 })
	cancel()
	require.NoError(t, <-done)

	rows, err := f.Pool.Query(context.Background(),
		`SELECT start_offset, end_offset FROM ranges WHERE table_id = $1 ORDER BY start_offset`, f.Table.ID)
	require.NoError(t, err)
	var got [][2]int64
	for rows.Next() {
		var s, e int64
		require.NoError(t, rows.Scan(&s, &e))
		got = append(got, [2]int64{s, e})
	}
	require.NoError(t, rows.Err())
	require.Equal(t, [][2]int64{{0, 3}, {3, 6}, {6, 9}, {9, 10}, {10, 11}}, got)
}

// Unknown JSON fields are counted per partition in Postgres, with the
// first distinct example paths, in the transaction of each indexed range,
// and in /metrics; a rebuild of a range for serving counts nothing.
func TestUnknownFieldsCounted(t *testing.T) {
	f := testkit.NewFixture(t, 1, tables.Definition{Namespace: "t", Name: "u", Topic: "u", ValueFormat: "json",
		Schema: json.RawMessage(`{"type":"struct","fields":[{"id":1,"name":"VBELN","type":"string","required":false},{"id":2,"name":"AUFNR","type":"string","required":false}]}`)})
	reg := prometheus.NewRegistry()
	var built []string
	ix := indexer.New(f.Pool, f.Client, indexer.Config{FlushInterval: 50 * time.Millisecond, Registerer: reg,
		OnBuilt: func(key string, _ []byte) { built = append(built, key) }})
	l := f.Take(t, tables.PartitionScope(f.Table.ID, 0), "node-a")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ix.Run(ctx, l) }()

	counts := func() (n int64, examples []string) {
		t.Helper()
		err := f.Pool.QueryRow(context.Background(), `SELECT field_count, examples FROM unknown_fields WHERE table_id = $1 AND partition = 0`,
			f.Table.ID).Scan(&n, &examples)
		require.NoError(t, err)
		return n, examples
	}
	f.ProduceTo(t, 0, `{"VBELN":"1","x1":1,"x2":{"a":2}}`, `{"vbeln":"2"}`)
	testkit.WaitFor(t, "first range", func() bool { return indexedEnd(t, f, 0) == 2 })
	n, ex := counts()
	require.EqualValues(t, 3, n, "x1, x2 of the row and vbeln of the dead letter")
	require.Equal(t, []string{"x1", "x2", "vbeln"}, ex)

	var more []string
	for i := range 9 {
		more = append(more, fmt.Sprintf(`{"VBELN":"3","x2":1,"y%d":1}`, i))
	}
	f.ProduceTo(t, 0, more...)
	testkit.WaitFor(t, "second range", func() bool { return indexedEnd(t, f, 0) == 11 })
	n, ex = counts()
	require.EqualValues(t, 21, n)
	require.Equal(t, []string{"x1", "x2", "vbeln", "y0", "y1", "y2", "y3", "y4", "y5", "y6"}, ex, "the first 10 distinct paths")
	require.Equal(t, 21.0, testkit.CounterValue(t, reg, "mink_json_unknown_fields_total", "table", "t.u"))
	cancel()
	require.NoError(t, <-done)

	// Serving rebuilds the range from Kafka: the count stays.
	require.NotEmpty(t, built)
	_, err := rangefile.NewBuilder(f.Pool, f.Client, nil).Build(context.Background(), built[0])
	require.NoError(t, err)
	n, _ = counts()
	require.EqualValues(t, 21, n)
}
