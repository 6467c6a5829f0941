package cluster_test

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/cluster"
	"github.com/minkhq/mink/internal/pgtest"
)

// viewRows is a view's leases as leaseRows returns a full read.
func viewRows(ls []cluster.LeaseState) map[string]row {
	out := map[string]row{}
	for _, l := range ls {
		out[l.Scope] = row{holder: l.Holder, epoch: l.Epoch, free: l.Free}
	}
	return out
}

// readView brings v up to date and requires it to equal a full read, and
// returns whether v read in full and how many rows it read.
func readView(t *testing.T, pool *pgxpool.Pool, v *cluster.View, what string) (full bool, rows int) {
	t.Helper()
	ls, full, rows, err := v.Read(context.Background(), pool)
	require.NoError(t, err)
	require.Equal(t, leaseRows(t, pool), viewRows(ls), "after %s, the view equals a full read", what)
	return full, rows
}

// takeLease takes scope for holder for ttl, as lease_take.sql does.
func takeLease(t *testing.T, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, scope, holder string, ttl time.Duration) {
	t.Helper()
	var tid, epoch int64
	var kind string
	var p int32
	require.NoError(t, q.QueryRow(context.Background(), cluster.SQLLeaseTake, scope, holder, ttl.Microseconds()).Scan(&tid, &kind, &p, &epoch))
}

// TestViewFollowsChanges: after each kind of change a view brought up to
// date equals a full read at that moment, reading only what changed.
func TestViewFollowsChanges(t *testing.T) {
	pool, _ := pgtest.Pool(t)
	ctx := context.Background()
	a := createTable(t, pool, "a", 3)
	var v cluster.View

	full, rows := readView(t, pool, &v, "the first read")
	require.True(t, full, "the first read is a full read")
	require.Equal(t, 1+4, rows, "snapshot + 4 leases")
	full, rows = readView(t, pool, &v, "nothing")
	require.False(t, full)
	require.Equal(t, 1, rows, "nothing changed: the snapshot row only")

	takeLease(t, pool, fmt.Sprintf("%d/partition/0", a), "x", time.Hour)
	takeLease(t, pool, fmt.Sprintf("%d/writer", a), "x", time.Hour)
	full, rows = readView(t, pool, &v, "two takes")
	require.False(t, full)
	require.Equal(t, 1+2, rows)

	// A renewal moves expires_at only: no change to read.
	_, err := pool.Exec(ctx, `UPDATE leases SET expires_at = now() + interval '2 hours' WHERE holder = 'x'`)
	require.NoError(t, err)
	_, rows = readView(t, pool, &v, "a renewal")
	require.Equal(t, 1, rows)

	_, err = pool.Exec(ctx, `UPDATE leases SET holder = NULL, expires_at = NULL WHERE scope = $1`, fmt.Sprintf("%d/writer", a))
	require.NoError(t, err)
	_, rows = readView(t, pool, &v, "a release")
	require.Equal(t, 1+1, rows)

	b := createTable(t, pool, "b", 2)
	_, rows = readView(t, pool, &v, "a table created")
	require.Equal(t, 1+3, rows)

	_, err = pool.Exec(ctx, `DELETE FROM tables WHERE id = $1`, a)
	require.NoError(t, err)
	_, rows = readView(t, pool, &v, "a table dropped (tombstones)")
	require.Equal(t, 1+4, rows, "four tombstones")

	// A holding that expires changes no row; the view reads it as an
	// expired holding every round until someone takes or releases it.
	takeLease(t, pool, fmt.Sprintf("%d/partition/1", b), "y", 50*time.Millisecond)
	_, rows = readView(t, pool, &v, "a short take")
	require.Equal(t, 1+1, rows)
	time.Sleep(100 * time.Millisecond)
	_, rows = readView(t, pool, &v, "its expiry")
	require.Equal(t, 1+1, rows, "the expired holding")
	takeLease(t, pool, fmt.Sprintf("%d/partition/1", b), "z", time.Hour)
	_, rows = readView(t, pool, &v, "a takeover")
	require.Equal(t, 1+1, rows, "the take")
}

// TestViewConcurrentCommit: a take by a transaction that began before the
// view's read and committed after it. A change counter ("rows whose change
// number is above the largest one seen") misses it, because a later
// transaction committed first with a larger number; the view, which reads
// what its previous snapshot did not see, does not.
func TestViewConcurrentCommit(t *testing.T) {
	pool, _ := pgtest.Pool(t)
	ctx := context.Background()
	id := createTable(t, pool, "c", 2)
	var v cluster.View
	readView(t, pool, &v, "the first read")

	early, err := pool.Begin(ctx)
	require.NoError(t, err)
	defer early.Rollback(ctx)
	takeLease(t, early, fmt.Sprintf("%d/partition/0", id), "early", time.Hour) // gets the smaller transaction id
	late, err := pool.Begin(ctx)
	require.NoError(t, err)
	takeLease(t, late, fmt.Sprintf("%d/partition/1", id), "late", time.Hour)
	require.NoError(t, late.Commit(ctx))

	readView(t, pool, &v, "the late take committed, the early one open")
	var maxSeen string
	require.NoError(t, pool.QueryRow(ctx, `SELECT max(changed)::text FROM leases`).Scan(&maxSeen))

	require.NoError(t, early.Commit(ctx))
	var counter int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM leases WHERE changed > $1::text::xid8`, maxSeen).Scan(&counter))
	require.Zero(t, counter, "a change counter misses the early take")
	full, rows := readView(t, pool, &v, "the early take committed")
	require.False(t, full)
	require.Equal(t, 1+1, rows, "the view reads the early take")
	ls, _, _, err := v.Read(ctx, pool)
	require.NoError(t, err)
	require.Equal(t, "early", viewRows(ls)[fmt.Sprintf("%d/partition/0", id)].holder)
}

// TestViewFullRead: a view that may have missed a deletion reads in full:
// after tombstones it had not seen were pruned, and after a TRUNCATE.
func TestViewFullRead(t *testing.T) {
	pool, _ := pgtest.Pool(t)
	ctx := context.Background()
	a := createTable(t, pool, "a", 2)
	b := createTable(t, pool, "b", 2)
	createTable(t, pool, "c", 1)
	var v cluster.View
	readView(t, pool, &v, "the first read")

	// a is dropped; its tombstones are made old, so the next drop prunes
	// them before the view has read them.
	_, err := pool.Exec(ctx, `DELETE FROM tables WHERE id = $1`, a)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `UPDATE lease_deletions SET at = now() - interval '2 hours'`)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `DELETE FROM tables WHERE id = $1`, b)
	require.NoError(t, err)
	var left int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM lease_deletions`).Scan(&left))
	require.Equal(t, 3, left, "a's tombstones pruned, b's kept")
	full, _ := readView(t, pool, &v, "tombstones pruned")
	require.True(t, full, "pruned tombstones the view had not seen: a full read")
	full, _ = readView(t, pool, &v, "nothing")
	require.False(t, full)

	_, err = pool.Exec(ctx, `TRUNCATE leases`)
	require.NoError(t, err)
	full, _ = readView(t, pool, &v, "a truncate")
	require.True(t, full)
	require.Empty(t, leaseRows(t, pool))
}

// rowCounter is a pgx tracer that counts, per round of one node (a round
// starts with the node row upsert), the rows its statements returned.
type rowCounter struct {
	mu     sync.Mutex
	rounds []int64
}

func (r *rowCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if strings.Contains(d.SQL, "INSERT INTO nodes") {
		r.mu.Lock()
		r.rounds = append(r.rounds, 0)
		r.mu.Unlock()
	}
	return ctx
}

func (r *rowCounter) TraceQueryEnd(_ context.Context, _ *pgx.Conn, d pgx.TraceQueryEndData) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.rounds) > 0 && d.Err == nil {
		r.rounds[len(r.rounds)-1] += d.CommandTag.RowsAffected()
	}
}

func (r *rowCounter) started() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.rounds)
}

// TestRoundReadsWhatChanged: on a steady cluster, a round's statements
// return no more rows than the node's own leases (the renewal), the live
// nodes, its node row and the read's snapshot row: nothing that did not
// change. Before the view, every round read every lease.
func TestRoundReadsWhatChanged(t *testing.T) {
	pool, u := pgtest.Pool(t)
	ctx := context.Background()
	for i := range 4 {
		createTable(t, pool, fmt.Sprintf("t%d", i), 10)
	}
	counter := &rowCounter{}
	pcfg, err := pgxpool.ParseConfig(u)
	require.NoError(t, err)
	pcfg.ConnConfig.Tracer = counter
	traced, err := pgxpool.NewWithConfig(ctx, pcfg)
	require.NoError(t, err)
	t.Cleanup(traced.Close)
	reg := prometheus.NewRegistry()
	nodes := []*testNode{startNode(t, traced, "a", withRegistry(reg)), startNode(t, pool, "b"), startNode(t, pool, "c")}

	// Steady: every partition held and nothing moving for lease_ttl (three
	// rounds), then six rounds measured in which nothing moved either.
	var before map[string]row
	var from, to int
	for try := 0; ; try++ {
		require.Less(t, try, 30, "the cluster does not settle")
		before = leaseRows(t, pool)
		time.Sleep(testTTL)
		if parts, _ := heldBy(before); parts["a"]+parts["b"]+parts["c"] != 40 || !maps.Equal(before, leaseRows(t, pool)) {
			continue
		}
		from = counter.started()
		time.Sleep(2 * testTTL)
		to = counter.started()
		if maps.Equal(before, leaseRows(t, pool)) && jobsMatch(before, nodes...) {
			break
		}
	}
	require.Greater(t, to-from, 3)

	own := len(nodes[0].c.Held())
	bound := int64(own + len(nodes) + 1 + 1) // renewal, live nodes, node row, snapshot row
	counter.mu.Lock()
	rounds := counter.rounds[from : to-1] // whole rounds
	counter.mu.Unlock()
	for i, n := range rounds {
		require.LessOrEqual(t, n, bound, "round %d of a read %d rows; it holds %d of %d leases", i, n, own, len(before))
	}
	require.Equal(t, 1.0, metricValue(t, reg, "mink_cluster_lease_reads_total", "read", "full"), "one full read, the first")
	require.GreaterOrEqual(t, metricValue(t, reg, "mink_cluster_lease_reads_total", "read", "changes"), float64(len(rounds)))
	t.Logf("rows per round %v; bound %d (%d own leases, %d nodes); the lease table has %d rows", rounds, bound, own, len(nodes), len(before))
}
