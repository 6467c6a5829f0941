package tail_test

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/catalog"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/tables"
	"github.com/minkhq/mink/tail"
)

// loadTable loads the fixture's table through l, as the catalog does for a
// client, and parses the metadata it hands out.
func loadTable(t *testing.T, f *testkit.Fixture, l *tail.Loader) table.Metadata {
	t.Helper()
	ctx := context.Background()
	var loc string
	require.NoError(t, f.Pool.QueryRow(ctx, `SELECT metadata_location FROM tables WHERE id = $1`, f.Table.ID).Scan(&loc))
	res, err := l.LoadTable(ctx, catalog.Table{ID: f.Table.ID, MetadataLocation: loc})
	require.NoError(t, err)
	md, err := table.ParseMetadataBytes(res.Metadata)
	require.NoError(t, err)
	return md
}

// produce writes records to the fixture's topic, round robin over its
// partitions with a pause after each, until the returned stop, which
// returns once the last write ended. The counter holds the records
// acknowledged so far.
func produce(t *testing.T, f *testkit.Fixture, partitions int32, pause time.Duration) (*atomic.Int64, func()) {
	ctx := context.Background()
	cl := f.Producer(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var acked atomic.Int64
	pctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; pctx.Err() == nil; i++ {
			r := &kgo.Record{Topic: f.Table.Topic, Partition: int32(i) % partitions, Value: []byte(strconv.Itoa(i))}
			if cl.ProduceSync(ctx, r).FirstErr() == nil {
				acked.Add(1)
			}
			time.Sleep(pause)
		}
	}()
	return &acked, func() { cancel(); <-done }
}

// Loads of six loaders (as on six nodes) race each other while a producer
// writes: their commits form one chain of appends, one sequence number
// each, and the tail files they committed tile each partition from 0 to its
// content end with no gap and no overlap; a last load holds exactly the
// records produced.
func TestConcurrentLoadsFormOneChain(t *testing.T) {
	ctx := context.Background()
	const partitions = 3
	f := testkit.NewFixture(t, partitions, tables.Definition{Namespace: "n", Name: "t", Topic: "t", ValueFormat: "raw"})
	pool, kc := f.Pool, f.Client

	produced, stopProducing := produce(t, f, partitions, time.Millisecond)
	var wg sync.WaitGroup

	var handed sync.Map
	deadline := time.Now().Add(3 * time.Second)
	for range 6 {
		l := tail.New(pool, kc, tail.Config{})
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				if s := loadTable(t, f, l).CurrentSnapshot(); s != nil {
					handed.Store(s.SnapshotID, s.SequenceNumber)
				}
			}
		}()
	}
	time.Sleep(3 * time.Second)
	stopProducing()
	wg.Wait()

	md := loadTable(t, f, tail.New(pool, kc, tail.Config{}))
	cur := md.CurrentSnapshot()
	require.Equal(t, strconv.FormatInt(produced.Load(), 10), cur.Summary.Properties["total-records"])
	// One chain of appends, each sequence number once, every snapshot a
	// load handed out on it (no expiry in 3 s).
	chain := map[int64]int64{}
	for s := cur; s != nil; {
		require.Equal(t, table.OpAppend, s.Summary.Operation)
		chain[s.SnapshotID] = s.SequenceNumber
		if s.ParentSnapshotID == nil {
			require.EqualValues(t, 1, s.SequenceNumber)
			break
		}
		p := md.SnapshotByID(*s.ParentSnapshotID)
		require.NotNil(t, p)
		require.Equal(t, p.SequenceNumber+1, s.SequenceNumber)
		s = p
	}
	require.Len(t, md.Snapshots(), len(chain))
	n := 0
	handed.Range(func(id, seq any) bool {
		n++
		require.Equal(t, seq, chain[id.(int64)], "snapshot %d handed out is on the chain", id)
		return true
	})
	require.Greater(t, n, 10, "loads committed snapshots")

	// The tail files tile each partition up to its content end.
	rows, err := pool.Query(ctx, `SELECT partition, start_offset, end_offset FROM tail_files
		WHERE table_id = $1 AND removed_snapshot_id IS NULL ORDER BY partition, start_offset`, f.Table.ID)
	require.NoError(t, err)
	next := map[int32]int64{}
	for rows.Next() {
		var p int32
		var s, e int64
		require.NoError(t, rows.Scan(&p, &s, &e))
		require.Equal(t, next[p], s, "partition %d: gap or overlap at %d", p, s)
		next[p] = e
	}
	require.NoError(t, rows.Err())
	var ends []int64
	for p := int32(0); p < partitions; p++ {
		var end int64
		require.NoError(t, pool.QueryRow(ctx, `SELECT end_offset FROM content_ends WHERE table_id = $1 AND partition = $2`,
			f.Table.ID, p).Scan(&end))
		require.Equal(t, next[p], end, "partition %d", p)
		ends = append(ends, end)
	}
	var sum int64
	for _, e := range ends {
		sum += e
	}
	require.Equal(t, produced.Load(), sum)
	require.False(t, slices.Contains(ends, 0))
}

// A load that sees partitions the topic gained includes their records at
// once and records the partitions with their leases (the writer would only
// at its next partition check).
func TestLoadIncludesNewPartitions(t *testing.T) {
	ctx := context.Background()
	f := testkit.NewFixture(t, 2, tables.Definition{Namespace: "n", Name: "g", Topic: "g", ValueFormat: "raw"})
	pool, kc := f.Pool, f.Client
	cl := f.Producer(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	_, err := kadm.NewClient(cl).CreatePartitions(ctx, 1, "g")
	require.NoError(t, err)
	require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Topic: "g", Partition: 2, Value: []byte("new")},
		&kgo.Record{Topic: "g", Partition: 0, Value: []byte("old")}).FirstErr())

	md := loadTable(t, f, tail.New(pool, kc, tail.Config{}))
	require.Equal(t, "2", md.CurrentSnapshot().Summary.Properties["total-records"])
	var parts, leases int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM partitions WHERE table_id = $1`, f.Table.ID).Scan(&parts))
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM leases WHERE table_id = $1 AND kind = 'partition'`, f.Table.ID).Scan(&leases))
	require.Equal(t, 3, parts)
	require.Equal(t, 3, leases)
}

// Loads of one node share its extensions of a table (group commit): 32
// loads at a time while a producer writes never have two of this node's
// commits waiting for the table's row lock (without sharing, each load
// with offsets of its own held a connection there), and each load's
// snapshot holds every record acknowledged before it began.
func TestLoadsOfOneNodeShareExtensions(t *testing.T) {
	ctx := context.Background()
	const partitions = 2
	f := testkit.NewFixture(t, partitions, tables.Definition{Namespace: "n", Name: "s", Topic: "s", ValueFormat: "raw"})
	pool, kc := f.Pool, f.Client
	acked, stopProducing := produce(t, f, partitions, 0)
	pctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup

	// Sessions waiting for a table's row lock (commit/sql/head_lock.sql).
	var maxWaiting atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		for pctx.Err() == nil {
			var n int64
			if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
				WHERE wait_event_type = 'Lock' AND query LIKE '-- Lock a table''s row%'`).Scan(&n); err == nil && n > maxWaiting.Load() {
				maxWaiting.Store(n)
			}
			time.Sleep(time.Millisecond)
		}
	}()

	l := tail.New(pool, kc, tail.Config{})
	var loads atomic.Int64
	var lwg sync.WaitGroup
	deadline := time.Now().Add(2 * time.Second)
	for range 32 {
		lwg.Add(1)
		go func() {
			defer lwg.Done()
			for time.Now().Before(deadline) {
				before := acked.Load()
				md := loadTable(t, f, l)
				if before == 0 {
					continue
				}
				total, err := strconv.ParseInt(md.CurrentSnapshot().Summary.Properties["total-records"], 10, 64)
				require.NoError(t, err)
				require.GreaterOrEqual(t, total, before, "a load holds every record acknowledged before it")
				loads.Add(1)
			}
		}()
	}
	lwg.Wait()
	stop()
	stopProducing()
	wg.Wait()
	require.Greater(t, loads.Load(), int64(30))
	var commits int64
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM snapshots WHERE table_id = $1`, f.Table.ID).Scan(&commits))
	require.Greater(t, commits, int64(5), "loads committed")
	require.Less(t, commits, loads.Load()/2, "loads shared commits")
	require.Zero(t, maxWaiting.Load(), "two commits of one node waited for the row lock")
}
