package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/devenv"
	"github.com/minkhq/mink/icebergmeta"
	"github.com/minkhq/mink/internal/clustertest"
	"github.com/minkhq/mink/internal/pgtest"
)

// TestTimeTravel: records produced for 75 s (MINK_TIMETRAVEL_SECONDS)
// with a commit every second; then, for 20 random instants T, the snapshot
// an engine picks for `FOR TIMESTAMP AS OF T` (iceberg-go's SnapshotAsOf:
// the newest snapshot-log entry at or before T) of the table loaded through
// the REST catalog holds exactly the records committed by that snapshot,
// read with iceberg-go; it is within one thinning step (plus a commit
// interval) of T. The ground truth is recorded while the test runs: every
// 20 ms, the current snapshot and the content ends, read in one database
// snapshot (a commit moves both in one transaction, docs/design.md §4.4).
func TestTimeTravel(t *testing.T) {
	seconds := 75
	if n, err := strconv.Atoi(os.Getenv("MINK_TIMETRAVEL_SECONDS")); err == nil {
		seconds = n
	}
	ctx := context.Background()
	pgURL := pgtest.Schema(t)
	const commitInterval = time.Second
	env, err := devenv.StartEnv(ctx, devenv.DevConfig{Nodes: 1, PostgresURL: pgURL, EphemeralPorts: true,
		LeaseTTL: 3 * time.Second, FlushInterval: 300 * time.Millisecond, CommitInterval: commitInterval})
	require.NoError(t, err)
	t.Cleanup(env.Stop)
	const partitions = 2
	createTable(t, env, partitions, map[string]any{
		"namespace": "tt", "name": "events", "topic": "tt", "value_format": "raw"})
	pool, err := pgxpool.New(ctx, pgURL)
	require.NoError(t, err)
	defer pool.Close()

	// The ground truth: snapshot id -> content end per partition.
	truth := map[int64][partitions]int64{}
	watchCtx, stopWatch := context.WithCancel(ctx)
	watched := make(chan error, 1)
	go func() {
		watched <- func() error {
			for watchCtx.Err() == nil {
				err := pgx.BeginTxFunc(watchCtx, pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
					var id *int64
					if err := tx.QueryRow(watchCtx, `SELECT current_snapshot_id FROM tables WHERE namespace = 'tt' AND name = 'events'`).Scan(&id); err != nil || id == nil {
						return err
					}
					var ends [partitions]int64
					rows, err := tx.Query(watchCtx, `SELECT c.partition, c.end_offset FROM content_ends c JOIN tables t ON t.id = c.table_id
						WHERE t.namespace = 'tt' AND t.name = 'events'`)
					if err != nil {
						return err
					}
					var p int32
					var end int64
					if _, err := pgx.ForEachRow(rows, []any{&p, &end}, func() error { ends[p] = end; return nil }); err != nil {
						return err
					}
					if old, ok := truth[*id]; ok && old != ends {
						return fmt.Errorf("snapshot %d seen with content ends %v and %v", *id, old, ends)
					}
					truth[*id] = ends
					return nil
				})
				if err != nil && watchCtx.Err() == nil {
					return err
				}
				time.Sleep(20 * time.Millisecond)
			}
			return nil
		}()
	}()

	cl, err := kgo.NewClient(kgo.SeedBrokers(env.Brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer cl.Close()
	produced := map[pk]string{}
	rng := rand.New(rand.NewPCG(3, 5))
	for end := time.Now().Add(time.Duration(seconds) * time.Second); time.Now().Before(end); {
		p := int32(rng.IntN(partitions))
		var recs []*kgo.Record
		for i := range 1 + rng.IntN(5) {
			recs = append(recs, &kgo.Record{Topic: "tt", Partition: p, Value: []byte(fmt.Sprintf("%d-%d", time.Now().UnixNano(), i))})
		}
		res := cl.ProduceSync(ctx, recs...)
		require.NoError(t, res.FirstErr())
		for _, r := range res {
			produced[pk{r.Record.Partition, r.Record.Offset}] = string(r.Record.Value)
		}
		time.Sleep(time.Duration(20+rng.IntN(60)) * time.Millisecond)
	}
	clustertest.WaitCaughtUp(t, env.Nodes[0].URL(), "tt.events")
	time.Sleep(2 * commitInterval)
	stopWatch()
	require.NoError(t, <-watched)

	cat, err := rest.NewCatalog(ctx, "mink", env.Nodes[0].URL())
	require.NoError(t, err)
	tbl, err := cat.LoadTable(ctx, table.Identifier{"tt", "events"})
	require.NoError(t, err)
	md := tbl.Metadata()
	var logged int
	for e := range md.SnapshotLogs() {
		require.NotNil(t, md.SnapshotByID(e.SnapshotID), "snapshot-log entry of a snapshot not in the metadata")
		logged++
	}
	require.Equal(t, len(md.Snapshots()), logged, "the snapshot-log lists every retained snapshot")
	thinning, err := icebergmeta.ParseThinning(icebergmeta.DefaultThinning)
	require.NoError(t, err)
	first := md.Snapshots()[0].TimestampMs
	for _, s := range md.Snapshots() {
		first = min(first, s.TimestampMs)
	}
	last := md.CurrentSnapshot().TimestampMs
	t.Logf("%d records produced, %d snapshots committed (seen), %d retained over %v", len(produced), len(truth),
		len(md.Snapshots()), time.Duration(last-first)*time.Millisecond)
	require.Greater(t, len(truth), seconds/2, "commits about every second")

	checked := 0
	for i := range 20 {
		T := first + rng.Int64N(last-first+1)
		s := tbl.SnapshotAsOf(T, true)
		require.NotNil(t, s, "T %d", T)
		require.LessOrEqual(t, s.TimestampMs, T)
		// The step of S's age band (S is as old as T or older; at a band's
		// border the older band's step applies).
		age := time.Duration(last-T) * time.Millisecond
		step := thinningStep(thinning, time.Duration(last-s.TimestampMs)*time.Millisecond)
		require.LessOrEqual(t, time.Duration(T-s.TimestampMs)*time.Millisecond, step+commitInterval+500*time.Millisecond,
			"instant %d (%v before the last commit): snapshot %d is %d ms older", i, age, s.SnapshotID, T-s.TimestampMs)
		ends, ok := truth[s.SnapshotID]
		if !ok {
			t.Logf("instant %d: snapshot %d was not seen by the watch", i, s.SnapshotID)
			continue
		}
		at, err := tbl.Scan(table.WithSnapshotID(s.SnapshotID)).ToArrowTable(ctx)
		require.NoError(t, err)
		got := map[pk]string{}
		clustertest.EachRow(t, at, func(p int32, o int64, v []byte) {
			k := pk{p, o}
			_, dup := got[k]
			require.False(t, dup, "instant %d: %v twice", i, k)
			got[k] = string(v)
		})
		at.Release()
		want := 0
		for p := range int32(partitions) {
			for o := int64(0); o < ends[p]; o++ {
				require.Equal(t, produced[pk{p, o}], got[pk{p, o}], "instant %d, snapshot %d: record %d/%d", i, s.SnapshotID, p, o)
				want++
			}
		}
		require.Len(t, got, want, "instant %d, snapshot %d: records past its committed offsets %v", i, s.SnapshotID, ends)
		checked++
	}
	require.GreaterOrEqual(t, checked, 18, "instants whose snapshot the watch saw")
}

// thinningStep is the thinning step of snapshots of the given age (0:
// every one is kept).
func thinningStep(th icebergmeta.Thinning, age time.Duration) time.Duration {
	var s time.Duration
	for _, st := range th {
		if age >= st.Age {
			s = st.Step
		}
	}
	return s
}
