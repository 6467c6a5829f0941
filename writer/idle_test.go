package writer_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minkhq/mink/indexer"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/tables"
	"github.com/minkhq/mink/writer"
)

// statements counts the statements a pool sends, by their first line.
type statements struct {
	mu   sync.Mutex
	seen map[string]int
}

func (s *statements) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	first, _, _ := strings.Cut(strings.TrimSpace(d.SQL), "\n")
	s.mu.Lock()
	s.seen[first]++
	s.mu.Unlock()
	return ctx
}

func (s *statements) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// take returns the statements seen since the last take.
func (s *statements) take() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.seen
	s.seen = map[string]int{}
	return out
}

// watchLine is the first line of writer/sql/watch.sql.
const watchLine = "-- What a node's writers need to know of their tables each commit interval,"

// TestIdleWriter: once a table is committed and its duties ran on the new
// snapshot, its writer sends nothing to Postgres but the node's one look
// per commit interval (no commit, no per-table query) while nothing
// arrives; the next record is committed.
func TestIdleWriter(t *testing.T) {
	ctx := context.Background()
	f := testkit.NewFixture(t, 2, tables.Definition{Namespace: "t", Name: "idle", Topic: "idle", ValueFormat: "raw"})
	tbl := f.Table
	cl := f.Producer(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	ix := indexer.New(f.Pool, f.Client, indexer.Config{FlushInterval: 20 * time.Millisecond})
	for p := int32(0); p < 2; p++ {
		l := f.Take(t, tables.PartitionScope(tbl.ID, p), "node-a")
		testkit.Start(t, func(ctx context.Context) error { return ix.Run(ctx, l) })
	}
	cfg := f.Pool.Config()
	traced := &statements{seen: map[string]int{}}
	cfg.ConnConfig.Tracer = traced
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	defer pool.Close()
	w := writer.New(pool, f.Client, writer.Config{CommitInterval: 50 * time.Millisecond,
		StatisticsInterval: 100 * time.Millisecond, PartitionCheckInterval: 100 * time.Millisecond})
	wl := f.Take(t, tables.WriterScope(tbl.ID), "node-a")
	testkit.Start(t, func(ctx context.Context) error { return w.Run(ctx, wl) })

	committed := func() (n int64) {
		require.NoError(t, f.Pool.QueryRow(ctx, `SELECT coalesce(sum(record_count), 0) FROM data_files
			WHERE table_id = $1 AND committed_snapshot_id IS NOT NULL`, tbl.ID).Scan(&n))
		return n
	}
	require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Topic: "idle", Partition: 0, Value: []byte("a")},
		&kgo.Record{Topic: "idle", Partition: 1, Value: []byte("b")}).FirstErr())
	testkit.WaitFor(t, "2 records committed", func() bool { return committed() == 2 })

	// The duties that follow the commit (statistics, expiry, assembly,
	// collection) run once; then only the look.
	testkit.WaitFor(t, "a quiet writer", func() bool {
		traced.take()
		time.Sleep(300 * time.Millisecond)
		return len(traced.take()) == 1
	})
	var snapshots int
	require.NoError(t, f.Pool.QueryRow(ctx, `SELECT count(*) FROM snapshots WHERE table_id = $1`, tbl.ID).Scan(&snapshots))
	time.Sleep(time.Second) // 20 commit intervals
	seen := traced.take()
	require.GreaterOrEqual(t, seen[watchLine], 10, "the node looks every commit interval")
	delete(seen, watchLine)
	require.Empty(t, seen, "no other statement while nothing arrives")
	var after int
	require.NoError(t, f.Pool.QueryRow(ctx, `SELECT count(*) FROM snapshots WHERE table_id = $1`, tbl.ID).Scan(&after))
	require.Equal(t, snapshots, after, "no commit while nothing arrives")

	require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Topic: "idle", Partition: 1, Value: []byte("c")}).FirstErr())
	testkit.WaitFor(t, "the next record committed", func() bool { return committed() == 3 })
}

// TestIdleWriterUncommittedPartition: a partition no commit reached yet
// (no content end) whose indexed ranges hold only an aborted transaction
// has no data file to commit, yet a commit round has work: moving its
// content end past the range. The watch sees it as pending, as
// commit/sql/committed_offsets.sql counts it from the partition's start.
func TestIdleWriterUncommittedPartition(t *testing.T) {
	ctx := context.Background()
	f := testkit.NewFixture(t, 2, tables.Definition{Namespace: "t", Name: "aborted", Topic: "aborted", ValueFormat: "raw"})
	tbl := f.Table
	ix := indexer.New(f.Pool, f.Client, indexer.Config{FlushInterval: 20 * time.Millisecond})
	for p := int32(0); p < 2; p++ {
		l := f.Take(t, tables.PartitionScope(tbl.ID, p), "node-a")
		testkit.Start(t, func(ctx context.Context) error { return ix.Run(ctx, l) })
	}
	w := writer.New(f.Pool, f.Client, writer.Config{CommitInterval: 50 * time.Millisecond})
	wl := f.Take(t, tables.WriterScope(tbl.ID), "node-a")
	testkit.Start(t, func(ctx context.Context) error { return w.Run(ctx, wl) })

	end := func(p int32) (e int64) {
		err := f.Pool.QueryRow(ctx, `SELECT end_offset FROM content_ends WHERE table_id = $1 AND partition = $2`, tbl.ID, p).Scan(&e)
		if err == pgx.ErrNoRows {
			return -1
		}
		require.NoError(t, err)
		return e
	}
	f.ProduceTo(t, 0, "a")
	testkit.WaitFor(t, "partition 0 committed", func() bool { return end(0) == 1 })
	require.Equal(t, int64(-1), end(1), "no commit reached partition 1")

	tx := f.Producer(t, kgo.TransactionalID("aborted"), kgo.DefaultProduceTopic("aborted"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, tx.BeginTransaction())
	require.NoError(t, tx.ProduceSync(ctx, &kgo.Record{Partition: 1, Value: []byte("x")}).FirstErr())
	require.NoError(t, tx.EndTransaction(ctx, kgo.TryAbort)) // marker at 1
	testkit.WaitFor(t, "partition 1 indexed", func() bool {
		var e int64
		require.NoError(t, f.Pool.QueryRow(ctx, `SELECT coalesce(max(end_offset), 0) FROM ranges WHERE table_id = $1 AND partition = 1`, tbl.ID).Scan(&e))
		return e == 2
	})
	testkit.WaitFor(t, "partition 1 committed past the aborted transaction", func() bool { return end(1) == 2 })
}

// TestWatchUnknownTopic: a table whose topic Kafka does not know (deleted)
// does not make the watch ask Kafka for log start offsets at every look:
// each topic is asked once per expiry interval (5 looks), answered or not.
func TestWatchUnknownTopic(t *testing.T) {
	ctx := context.Background()
	f := testkit.NewFixture(t, 1, tables.Definition{Namespace: "t", Name: "kept", Topic: "kept", ValueFormat: "raw"})
	gone, err := tables.Create(ctx, f.Pool, testkit.Warehouse,
		tables.Definition{Namespace: "t", Name: "gone", Topic: "gone", ValueFormat: "raw"},
		[]tables.PartitionStart{{Partition: 0}})
	require.NoError(t, err)
	cfg := f.Pool.Config()
	traced := &statements{seen: map[string]int{}}
	cfg.ConnConfig.Tracer = traced
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	defer pool.Close()
	w := writer.New(pool, f.Client, writer.Config{CommitInterval: 60 * time.Millisecond})
	for _, id := range []int64{f.Table.ID, gone.ID} {
		l := f.Take(t, tables.WriterScope(id), "node-a")
		testkit.Start(t, func(ctx context.Context) error { return w.Run(ctx, l) })
	}
	var mu sync.Mutex
	asked := 0
	// Requests naming the kept topic: the watch's (the gone table's own
	// duties fail and retry on their own, naming only "gone").
	f.Cluster.ControlKey(int16(kmsg.ListOffsets), func(req kmsg.Request) (kmsg.Response, error, bool) {
		f.Cluster.KeepControl()
		for _, rt := range req.(*kmsg.ListOffsetsRequest).Topics {
			if rt.Topic == "kept" {
				mu.Lock()
				asked++
				mu.Unlock()
			}
		}
		return nil, nil, false
	})
	time.Sleep(500 * time.Millisecond) // the first rounds' duties
	traced.take()
	mu.Lock()
	asked = 0
	mu.Unlock()
	time.Sleep(2 * time.Second)
	looks := traced.take()[watchLine]
	mu.Lock()
	n := asked
	mu.Unlock()
	require.GreaterOrEqual(t, looks, 10, "the node looks every commit interval")
	// Once per 5 looks for the watch and once per expiry interval for the
	// kept table's own duty: 2 in 5; asking at every look would be 5 in 5
	// or more. 18 in 34 was seen on a loaded machine.
	require.Less(t, n, looks*3/4, "ListOffsets requests for the kept topic in %d looks", looks)
}
