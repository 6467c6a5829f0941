package indexer_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/cluster"
	"github.com/minkhq/mink/datafile"
	"github.com/minkhq/mink/devenv"
	"github.com/minkhq/mink/indexer"
	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/kafka"
	"github.com/minkhq/mink/objects"
	"github.com/minkhq/mink/pgstore"
	"github.com/minkhq/mink/tables"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

type fixture struct {
	pool  *pgxpool.Pool
	kf    *kfake.Cluster
	kc    *kafka.Client
	table *tables.Table
}

func newFixture(t testing.TB, partitions int32, def tables.Definition) *fixture {
	t.Helper()
	pool, _ := pgtest.Pool(t)
	kf, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, def.Topic))
	require.NoError(t, err)
	t.Cleanup(kf.Close)
	kc, err := kafka.New(kafka.Config{Brokers: kf.ListenAddrs()})
	require.NoError(t, err)
	t.Cleanup(kc.Close)
	var starts []tables.PartitionStart
	for p := int32(0); p < partitions; p++ {
		starts = append(starts, tables.PartitionStart{Partition: p})
	}
	tbl, err := tables.Create(context.Background(), pool, "mink", def, starts)
	require.NoError(t, err)
	return &fixture{pool: pool, kf: kf, kc: kc, table: tbl}
}

// take gives the lease of scope to holder, as the cluster loop does.
func (f *fixture) take(t testing.TB, scope, holder string) cluster.Lease {
	t.Helper()
	var l cluster.Lease
	err := f.pool.QueryRow(context.Background(), `
		UPDATE leases SET holder = $2, epoch = epoch + 1, expires_at = now() + interval '1 minute'
		WHERE scope = $1 RETURNING scope, table_id, kind, coalesce(partition, 0), holder, epoch`, scope, holder).
		Scan(&l.Scope, &l.TableID, &l.Kind, &l.Partition, &l.Holder, &l.Epoch)
	require.NoError(t, err)
	return l
}

func (f *fixture) produce(t testing.TB, partition int32, values ...string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(f.kf.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer cl.Close()
	var recs []*kgo.Record
	for _, v := range values {
		recs = append(recs, &kgo.Record{Topic: f.table.Topic, Partition: partition, Value: []byte(v)})
	}
	require.NoError(t, cl.ProduceSync(context.Background(), recs...).FirstErr())
}

func (f *fixture) indexedEnd(t testing.TB, partition int32) int64 {
	t.Helper()
	var end int64
	require.NoError(t, f.pool.QueryRow(context.Background(),
		`SELECT coalesce(max(end_offset), 0) FROM ranges WHERE table_id = $1 AND partition = $2`, f.table.ID, partition).Scan(&end))
	return end
}

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A stale indexer cannot write: once another node takes the partition
// lease (a higher epoch), Postgres rejects the old holder's next range and
// the old indexer stops with ErrFenced. The new holder resumes exactly at
// the indexed end: no gap, no overlap.
func TestStaleIndexerIsFenced(t *testing.T) {
	f := newFixture(t, 1, tables.Definition{Namespace: "t", Name: "s", Topic: "s", ValueFormat: "string"})
	reg := prometheus.NewRegistry()
	ix := indexer.New(f.pool, f.kc, indexer.Config{FlushInterval: 50 * time.Millisecond, Registerer: reg})
	scope := tables.PartitionScope(f.table.ID, 0)

	old := f.take(t, scope, "node-a")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- ix.Run(ctx, old) }()
	f.produce(t, 0, "a", "b", "c")
	waitFor(t, "first range", func() bool { return f.indexedEnd(t, 0) == 3 })

	// node-b takes the lease; node-a does not know yet.
	newer := f.take(t, scope, "node-b")
	require.Equal(t, old.Epoch+1, newer.Epoch)
	f.produce(t, 0, "d", "e")
	select {
	case err := <-done:
		require.True(t, errors.Is(err, pgstore.ErrFenced), "old indexer stops fenced, got %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("stale indexer kept running")
	}
	require.EqualValues(t, 3, f.indexedEnd(t, 0), "the stale write left nothing")
	require.Equal(t, 1.0, counterValue(t, reg, "mink_fenced_writes_total", "job", "indexer"), "the fenced write is counted")
	require.Equal(t, 0.0, counterValue(t, reg, "mink_fenced_writes_total", "job", "writer"))

	go func() { done <- ix.Run(ctx, newer) }()
	waitFor(t, "new holder's range", func() bool { return f.indexedEnd(t, 0) == 5 })
	rows, err := f.pool.Query(context.Background(),
		`SELECT start_offset, end_offset, lease_holder, lease_epoch FROM ranges WHERE table_id = $1 ORDER BY start_offset`, f.table.ID)
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
	require.Equal(t, 1.0, counterValue(t, reg, "mink_fenced_writes_total", "job", "indexer"), "the new holder was not fenced")
}

// counterValue returns the value of counter name{label=value} in g, or 0
// when it has no such series.
func counterValue(t testing.TB, g prometheus.Gatherer, name, label, value string) float64 {
	t.Helper()
	mfs, err := g.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == label && lp.GetValue() == value {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// The builder rebuilds a data file byte for byte from Kafka, and refuses
// one whose recorded checksum differs.
func TestBuilderRebuildsRecordedBytes(t *testing.T) {
	f := newFixture(t, 2, tables.Definition{Namespace: "t", Name: "j", Topic: "j", ValueFormat: "json",
		Schema: json.RawMessage(devenv.EarthquakesSchema)})
	var built = map[string][]byte{}
	ix := indexer.New(f.pool, f.kc, indexer.Config{FlushInterval: 50 * time.Millisecond,
		OnBuilt: func(key string, b []byte) { built[key] = b }})
	l := f.take(t, tables.PartitionScope(f.table.ID, 1), "node-a")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ix.Run(ctx, l) }()
	f.produce(t, 1, `{"id":"a","properties":{"mag":1,"time":1700000000000}}`, `not json`,
		`{"id":"b","properties":{"mag":2.5,"time":"2023-11-14T22:13:20Z"}}`)
	waitFor(t, "range", func() bool { return f.indexedEnd(t, 1) == 3 })
	cancel()
	require.NoError(t, <-done)

	key := f.table.DataFileKey(1, 0, 3, datafile.EncoderVersion)
	dlq, err := tables.DLQ(context.Background(), f.pool, f.table.ID)
	require.NoError(t, err)
	dlqKey := dlq.DataFileKey(1, 0, 3, datafile.EncoderVersion)
	require.Contains(t, built, key)
	require.Contains(t, built, dlqKey)

	b := indexer.NewBuilder(f.pool, f.kc)
	got, err := b.Build(context.Background(), key)
	require.NoError(t, err)
	require.Equal(t, built[key], got, "rebuild is byte-identical")
	got, err = b.Build(context.Background(), dlqKey)
	require.NoError(t, err)
	require.Equal(t, built[dlqKey], got, "dead-letter rebuild is byte-identical")

	_, err = b.Build(context.Background(), f.table.DataFileKey(1, 3, 9, datafile.EncoderVersion))
	require.ErrorIs(t, err, objects.ErrNotFound)

	_, err = f.pool.Exec(context.Background(), `UPDATE data_files SET sha256 = '\x00' WHERE path = $1`, key)
	require.NoError(t, err)
	_, err = b.Build(context.Background(), key)
	require.ErrorIs(t, err, objects.ErrChecksumMismatch)
}

// Ranges are cut at the target size, even inside one fetch, and by the
// flush interval for a trickle; they tile the offsets with no gap.
func TestRangesCutBySizeAndInterval(t *testing.T) {
	f := newFixture(t, 1, tables.Definition{Namespace: "t", Name: "c", Topic: "c", ValueFormat: "raw"})
	ix := indexer.New(f.pool, f.kc, indexer.Config{FlushInterval: 300 * time.Millisecond, RangeSize: 250})
	l := f.take(t, tables.PartitionScope(f.table.ID, 0), "node-a")
	var vals []string
	for i := 0; i < 10; i++ {
		vals = append(vals, string(make([]byte, 100)))
	}
	f.produce(t, 0, vals...) // one fetch of 1,000 bytes: ranges of 3 records
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ix.Run(ctx, l) }()
	waitFor(t, "10 records", func() bool { return f.indexedEnd(t, 0) == 10 })
	f.produce(t, 0, "x") // a trickle: cut by the flush interval
	waitFor(t, "11 records", func() bool { return f.indexedEnd(t, 0) == 11 })
	cancel()
	require.NoError(t, <-done)

	rows, err := f.pool.Query(context.Background(),
		`SELECT start_offset, end_offset FROM ranges WHERE table_id = $1 ORDER BY start_offset`, f.table.ID)
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
	f := newFixture(t, 1, tables.Definition{Namespace: "t", Name: "u", Topic: "u", ValueFormat: "json",
		Schema: json.RawMessage(`{"type":"struct","fields":[{"id":1,"name":"VBELN","type":"string","required":false},{"id":2,"name":"AUFNR","type":"string","required":false}]}`)})
	reg := prometheus.NewRegistry()
	var built []string
	ix := indexer.New(f.pool, f.kc, indexer.Config{FlushInterval: 50 * time.Millisecond, Registerer: reg,
		OnBuilt: func(key string, _ []byte) { built = append(built, key) }})
	l := f.take(t, tables.PartitionScope(f.table.ID, 0), "node-a")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ix.Run(ctx, l) }()

	counts := func() (n int64, examples []string) {
		t.Helper()
		err := f.pool.QueryRow(context.Background(), `SELECT field_count, examples FROM unknown_fields WHERE table_id = $1 AND partition = 0`,
			f.table.ID).Scan(&n, &examples)
		require.NoError(t, err)
		return n, examples
	}
	f.produce(t, 0, `{"VBELN":"1","x1":1,"x2":{"a":2}}`, `{"vbeln":"2"}`)
	waitFor(t, "first range", func() bool { return f.indexedEnd(t, 0) == 2 })
	n, ex := counts()
	require.EqualValues(t, 3, n, "x1, x2 of the row and vbeln of the dead letter")
	require.Equal(t, []string{"x1", "x2", "vbeln"}, ex)

	var more []string
	for i := range 9 {
		more = append(more, fmt.Sprintf(`{"VBELN":"3","x2":1,"y%d":1}`, i))
	}
	f.produce(t, 0, more...)
	waitFor(t, "second range", func() bool { return f.indexedEnd(t, 0) == 11 })
	n, ex = counts()
	require.EqualValues(t, 21, n)
	require.Equal(t, []string{"x1", "x2", "vbeln", "y0", "y1", "y2", "y3", "y4", "y5", "y6"}, ex, "the first 10 distinct paths")
	require.Equal(t, 21.0, counterValue(t, reg, "mink_json_unknown_fields_total", "table", "t.u"))
	cancel()
	require.NoError(t, <-done)

	// Serving rebuilds the range from Kafka: the count stays.
	require.NotEmpty(t, built)
	_, err := indexer.NewBuilder(f.pool, f.kc).Build(context.Background(), built[0])
	require.NoError(t, err)
	n, _ = counts()
	require.EqualValues(t, 21, n)
}
