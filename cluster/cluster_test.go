package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/cluster"
	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/pgstore"
)

const testTTL = 900 * time.Millisecond

// createTable inserts a table and its leases in one transaction, as
// tables.Create does: one partition lease per partition and one writer
// lease, which every node sees free at once.
func createTable(t *testing.T, pool *pgxpool.Pool, name string, partitions int) int64 {
	t.Helper()
	ctx := context.Background()
	tx, err := pool.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx)
	var id int64
	require.NoError(t, tx.QueryRow(ctx, `
		INSERT INTO tables (namespace, name, topic, value_format, schema_json, table_uuid, location, metadata_location)
		VALUES ('ns', $1, $1, 'json', '{}', gen_random_uuid(), 's3://w/ns/' || $1, 's3://w/ns/' || $1 || '/metadata/0.json')
		RETURNING id`, name).Scan(&id))
	for p := range partitions {
		_, err := tx.Exec(ctx, `INSERT INTO leases (scope, table_id, kind, partition) VALUES ($1, $2, 'partition', $3)`,
			fmt.Sprintf("%d/partition/%d", id, p), id, p)
		require.NoError(t, err)
	}
	_, err = tx.Exec(ctx, `INSERT INTO leases (scope, table_id, kind) VALUES ($1, $2, 'writer')`, fmt.Sprintf("%d/writer", id), id)
	require.NoError(t, err)
	require.NoError(t, tx.Commit(ctx))
	return id
}

// recorder is a fake Jobs: it records the jobs it runs.
type recorder struct {
	mu      sync.Mutex
	running map[string]cluster.Lease
	started []cluster.Lease
}

func newRecorder() *recorder { return &recorder{running: map[string]cluster.Lease{}} }

func (r *recorder) Run(ctx context.Context, l cluster.Lease) error {
	r.mu.Lock()
	if _, dup := r.running[l.Scope]; dup {
		r.mu.Unlock()
		return fmt.Errorf("job %s started twice", l.Scope)
	}
	r.running[l.Scope] = l
	r.started = append(r.started, l)
	r.mu.Unlock()
	<-ctx.Done()
	r.mu.Lock()
	delete(r.running, l.Scope)
	r.mu.Unlock()
	return nil
}

func (r *recorder) snapshot() map[string]cluster.Lease {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.running)
}

type testNode struct {
	c      *cluster.Cluster
	rec    *recorder
	cancel context.CancelFunc
	done   chan error
}

func startNode(t *testing.T, pool *pgxpool.Pool, id string, mutate ...func(*cluster.Config)) *testNode {
	t.Helper()
	cfg := cluster.Config{NodeID: id, AdvertiseURL: "http://" + id, LeaseTTL: testTTL}
	for _, m := range mutate {
		m(&cfg)
	}
	rec := newRecorder()
	c, err := cluster.New(pool, cfg, rec)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	n := &testNode{c: c, rec: rec, cancel: cancel, done: make(chan error, 1)}
	go func() { n.done <- c.Run(ctx) }()
	t.Cleanup(func() { n.stop(t) })
	return n
}

// stop ends Run and returns its error (once; later calls return nil).
func (n *testNode) stop(t *testing.T) error {
	t.Helper()
	n.cancel()
	select {
	case err, ok := <-n.done:
		if ok {
			close(n.done)
		}
		return err
	case <-time.After(5 * time.Second):
		t.Fatalf("Run of %s did not return", n.c.NodeID())
		return nil
	}
}

type row struct {
	holder string
	epoch  int64
	free   bool
}

func leaseRows(t *testing.T, pool *pgxpool.Pool) map[string]row {
	t.Helper()
	rows, err := pool.Query(context.Background(), cluster.SQLLeasesRead)
	require.NoError(t, err)
	out := map[string]row{}
	var l cluster.LeaseState
	_, err = pgx.ForEachRow(rows, []any{&l.Scope, &l.TableID, &l.Kind, &l.Partition, &l.Holder, &l.Epoch, &l.Free}, func() error {
		out[l.Scope] = row{holder: l.Holder, epoch: l.Epoch, free: l.Free}
		return nil
	})
	require.NoError(t, err)
	return out
}

// heldBy counts, per node, the partition leases it holds (unexpired).
func heldBy(rows map[string]row) (partitions map[string]int, writers map[string]string) {
	partitions, writers = map[string]int{}, map[string]string{}
	for s, r := range rows {
		if r.free {
			continue
		}
		if strings.HasSuffix(s, "/writer") {
			writers[s] = r.holder
		} else {
			partitions[r.holder]++
		}
	}
	return partitions, writers
}

// eventually polls cond until it holds, and fails t when it does not
// within the given time.
func eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	testkit.Eventually(t, within, 10*time.Millisecond, what, func() (bool, string) { return cond(), "" })
}

// jobsMatch reports whether the nodes' running jobs are exactly the
// database's unexpired holdings, with the same epochs, and Held agrees.
func jobsMatch(rows map[string]row, nodes ...*testNode) bool {
	want := map[string]map[string]int64{}
	for s, r := range rows {
		if r.free {
			continue
		}
		if want[r.holder] == nil {
			want[r.holder] = map[string]int64{}
		}
		want[r.holder][s] = r.epoch
	}
	for _, n := range nodes {
		got := map[string]int64{}
		for s, l := range n.rec.snapshot() {
			if l.Holder != n.c.NodeID() {
				return false
			}
			got[s] = l.Epoch
		}
		w := want[n.c.NodeID()]
		if w == nil {
			w = map[string]int64{}
		}
		if !maps.Equal(got, w) {
			return false
		}
		held := map[string]int64{}
		for _, l := range n.c.Held() {
			held[l.Scope] = l.Epoch
		}
		if !maps.Equal(held, w) {
			return false
		}
	}
	return true
}

// noLeaks fails when a goroutine of this package's loop or jobs is left.
func noLeaks(t *testing.T) {
	t.Helper()
	eventually(t, 2*time.Second, "cluster goroutines return", func() bool {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		for _, g := range strings.Split(string(buf), "\n\n") {
			if strings.Contains(g, "minkhq/mink/cluster.(*Cluster)") {
				return false
			}
		}
		return true
	})
}

// TestFencing: A takes a lease (epoch 1), it expires, B takes it (epoch 2).
// A's fenced write is rejected, B's passes; and while B's write
// transaction holds the row FOR SHARE, a take waits for it.
func TestFencing(t *testing.T) {
	pool, _ := pgtest.Pool(t)
	ctx := context.Background()
	id := createTable(t, pool, "fence", 1)
	scope := fmt.Sprintf("%d/partition/0", id)
	short := (300 * time.Millisecond).Microseconds()

	take := func(holder string) (int64, error) {
		var tid int64
		var kind string
		var p int32
		var epoch int64
		err := pool.QueryRow(ctx, cluster.SQLLeaseTake, scope, holder, short).Scan(&tid, &kind, &p, &epoch)
		return epoch, err
	}
	expired := func() bool { return leaseRows(t, pool)[scope].free }

	e, err := take("A")
	require.NoError(t, err)
	require.Equal(t, int64(1), e)
	_, err = take("B")
	require.ErrorIs(t, err, pgx.ErrNoRows, "a held lease is not free")
	eventually(t, 2*time.Second, "A's lease expires", expired)
	e, err = take("B")
	require.NoError(t, err)
	require.Equal(t, int64(2), e)

	write := func(holder string, epoch int64) error {
		tx, err := pool.Begin(ctx)
		require.NoError(t, err)
		defer tx.Rollback(ctx)
		if _, err := tx.Exec(ctx, `SELECT mink_check_epoch($1, $2, $3)`, scope, holder, epoch); err != nil {
			return err
		}
		return tx.Commit(ctx)
	}
	err = write("A", 1)
	require.True(t, pgstore.IsFenced(err), "A's write must be fenced, got %v", err)
	require.ErrorIs(t, pgstore.Fenced(err), pgstore.ErrFenced)
	require.NoError(t, write("B", 2))

	// B's long write transaction: the check passes and locks the row.
	tx, err := pool.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx)
	_, err = tx.Exec(ctx, `SELECT mink_check_epoch($1, 'B', 2)`, scope)
	require.NoError(t, err)
	eventually(t, 2*time.Second, "B's lease expires", expired)
	taken := make(chan int64, 1)
	go func() {
		e, err := take("C")
		if err != nil {
			e = -1
		}
		taken <- e
	}()
	select {
	case <-taken:
		t.Fatal("C took the lease while B's fenced transaction held it FOR SHARE")
	case <-time.After(300 * time.Millisecond):
	}
	require.NoError(t, tx.Commit(ctx))
	select {
	case e := <-taken:
		require.Equal(t, int64(3), e)
	case <-time.After(2 * time.Second):
		t.Fatal("C's take did not proceed after B's commit")
	}
	require.True(t, pgstore.IsFenced(write("B", 2)))
}

func TestOneNode(t *testing.T) {
	pool, _ := pgtest.Pool(t)
	id := createTable(t, pool, "one", 6)
	a := startNode(t, pool, "a")
	eventually(t, 5*time.Second, "a holds all 6 partitions and the writer", func() bool {
		rows := leaseRows(t, pool)
		parts, writers := heldBy(rows)
		return parts["a"] == 6 && writers[fmt.Sprintf("%d/writer", id)] == "a" && jobsMatch(rows, a)
	})
	require.True(t, a.c.Ready())
	require.Len(t, a.c.Members(), 1)
	for _, l := range a.rec.snapshot() {
		require.Equal(t, int64(1), l.Epoch, l.Scope)
		require.Equal(t, id, l.TableID)
	}
	require.NoError(t, a.stop(t))
	require.False(t, a.c.Ready())
	noLeaks(t)
}

// threeNodes starts a, b and c on a table of 6 partitions and waits until
// they converge: 2 partitions each, the writer at the node that prefers it
// most, every job running with its epoch.
func threeNodes(t *testing.T, pool *pgxpool.Pool, mutate ...func(*cluster.Config)) (int64, []*testNode) {
	t.Helper()
	id := createTable(t, pool, "three", 6)
	nodes := []*testNode{startNode(t, pool, "a", mutate...), startNode(t, pool, "b", mutate...), startNode(t, pool, "c", mutate...)}
	writer := fmt.Sprintf("%d/writer", id)
	top := cluster.TopNode([]string{"a", "b", "c"}, writer)
	eventually(t, 10*time.Second, "2 partitions each, writer at "+top+", every node seeing 3 members", func() bool {
		rows := leaseRows(t, pool)
		parts, writers := heldBy(rows)
		// A node's member list is its last round's: the leases can
		// settle a round before the last node to start is in everyone's.
		for _, n := range nodes {
			if len(n.c.Members()) != 3 {
				return false
			}
		}
		return parts["a"] == 2 && parts["b"] == 2 && parts["c"] == 2 && writers[writer] == top && jobsMatch(rows, nodes...)
	})
	return id, nodes
}

func TestThreeNodes(t *testing.T) {
	pool, _ := pgtest.Pool(t)
	_, nodes := threeNodes(t, pool)
	// Stable: nothing moves in the next rounds.
	before := leaseRows(t, pool)
	time.Sleep(2 * testTTL / 3)
	after := leaseRows(t, pool)
	for s, r := range before {
		require.Equal(t, r.holder, after[s].holder, s)
		require.Equal(t, r.epoch, after[s].epoch, s)
	}
	for _, n := range nodes {
		require.NoError(t, n.stop(t))
	}
	noLeaks(t)
}

// TestCleanStop: a node that stops cleanly leaves no row and no lease
// behind; the others take its partitions in their next round.
func TestCleanStop(t *testing.T) {
	pool, _ := pgtest.Pool(t)
	ctx := context.Background()
	id, nodes := threeNodes(t, pool)
	gone := nodes[2]
	require.NoError(t, gone.stop(t))
	stopped := time.Now()

	var n int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM nodes WHERE id = 'c'`).Scan(&n))
	require.Zero(t, n, "node row deleted")
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM leases WHERE holder = 'c'`).Scan(&n))
	require.Zero(t, n, "leases released")
	require.Empty(t, gone.rec.snapshot(), "jobs stopped")

	writer := fmt.Sprintf("%d/writer", id)
	top := cluster.TopNode([]string{"a", "b"}, writer)
	interval := testTTL / 3
	eventually(t, 2*interval+200*time.Millisecond, "a and b hold 3 each", func() bool {
		rows := leaseRows(t, pool)
		parts, writers := heldBy(rows)
		return parts["a"] == 3 && parts["b"] == 3 && writers[writer] == top && jobsMatch(rows, nodes[0], nodes[1])
	})
	t.Logf("taken over %s after the stop", time.Since(stopped))
	for _, n := range nodes[:2] {
		require.NoError(t, n.stop(t))
	}
	noLeaks(t)
}

// TestCrash: a node that crashes keeps its row and leases until they
// expire; no other node takes its leases before then (by the database
// clock, recorded by a trigger on every take).
func TestCrash(t *testing.T) {
	pool, _ := pgtest.Pool(t)
	ctx := context.Background()
	_, err := pool.Exec(ctx, `
		CREATE TABLE take_log (scope text, holder text, epoch bigint, old_expires_at timestamptz, at timestamptz DEFAULT clock_timestamp());
		CREATE FUNCTION log_take() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF NEW.epoch <> OLD.epoch THEN
				INSERT INTO take_log (scope, holder, epoch, old_expires_at) VALUES (NEW.scope, NEW.holder, NEW.epoch, OLD.expires_at);
			END IF;
			RETURN NEW;
		END $$;
		CREATE TRIGGER leases_take_log AFTER UPDATE ON leases FOR EACH ROW EXECUTE FUNCTION log_take();`)
	require.NoError(t, err)
	_, nodes := threeNodes(t, pool)
	victim := nodes[2]
	var crashedAt time.Time
	require.NoError(t, pool.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&crashedAt))
	cluster.Crash(victim.c)
	require.NoError(t, victim.stop(t))
	crashed := time.Now()

	// Its row and leases are still there.
	var n int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM nodes WHERE id = 'c' AND expires_at > now()`).Scan(&n))
	require.Equal(t, 1, n)
	rows := leaseRows(t, pool)
	var victims []string
	for s, r := range rows {
		if r.holder == "c" && !r.free {
			victims = append(victims, s)
		}
	}
	require.NotEmpty(t, victims)

	eventually(t, 3*testTTL, "a and b take c's leases", func() bool {
		parts, _ := heldBy(leaseRows(t, pool))
		return parts["a"] == 3 && parts["b"] == 3
	})
	t.Logf("taken over %s after the crash (lease_ttl %s)", time.Since(crashed), testTTL)
	require.GreaterOrEqual(t, time.Since(crashed), testTTL-testTTL/3, "no sooner than lease_ttl after the last renewal")

	lrows, err := pool.Query(ctx, `SELECT scope, holder, old_expires_at, at FROM take_log WHERE at > $1`, crashedAt)
	require.NoError(t, err)
	var scope, holder string
	var old, at time.Time
	taken := 0
	_, err = pgx.ForEachRow(lrows, []any{&scope, &holder, &old, &at}, func() error {
		if slices.Contains(victims, scope) {
			taken++
			require.NotEqual(t, "c", holder)
			require.True(t, at.After(old), "%s taken at %s before its expiry %s", scope, at, old)
			require.GreaterOrEqual(t, at.Sub(crashedAt), testTTL-testTTL/3, "%s taken %s after the crash", scope, at.Sub(crashedAt))
		}
		return nil
	})
	require.NoError(t, err)
	require.GreaterOrEqual(t, taken, len(victims))
	for _, n := range nodes[:2] {
		require.NoError(t, n.stop(t))
	}
	noLeaks(t)
}

func TestMaxPartitions(t *testing.T) {
	pool, _ := pgtest.Pool(t)
	id := createTable(t, pool, "capped", 6)
	capTwo := func(c *cluster.Config) { c.MaxPartitions = 2 }
	a, b := startNode(t, pool, "a", capTwo), startNode(t, pool, "b", capTwo)
	writer := fmt.Sprintf("%d/writer", id)
	check := func(want map[string]int, nodes ...*testNode) func() bool {
		return func() bool {
			rows := leaseRows(t, pool)
			parts, writers := heldBy(rows)
			ids := slices.Collect(maps.Keys(want))
			return maps.Equal(parts, want) && writers[writer] == cluster.TopNode(ids, writer) && jobsMatch(rows, nodes...)
		}
	}
	eventually(t, 5*time.Second, "2 each, 2 free", check(map[string]int{"a": 2, "b": 2}, a, b))
	time.Sleep(testTTL / 2)
	require.True(t, check(map[string]int{"a": 2, "b": 2}, a, b)(), "stays capped")
	c := startNode(t, pool, "c", capTwo)
	eventually(t, 5*time.Second, "2 each, all held", check(map[string]int{"a": 2, "b": 2, "c": 2}, a, b, c))
	for _, n := range []*testNode{a, b, c} {
		require.NoError(t, n.stop(t))
	}
	noLeaks(t)
}

// TestServerOnly: a node without the indexer role registers but holds
// nothing.
func TestServerOnly(t *testing.T) {
	pool, _ := pgtest.Pool(t)
	createTable(t, pool, "srv", 2)
	s := startNode(t, pool, "s", func(c *cluster.Config) { c.Roles = []string{cluster.RoleServer} })
	a := startNode(t, pool, "a")
	eventually(t, 5*time.Second, "a holds everything", func() bool {
		rows := leaseRows(t, pool)
		parts, _ := heldBy(rows)
		return parts["a"] == 2 && parts["s"] == 0 && jobsMatch(rows, a, s) && len(s.c.Members()) == 2
	})
	owner, ok := cluster.Owner(s.c.Members(), "some/file.parquet")
	require.True(t, ok)
	require.Contains(t, []string{"a", "s"}, owner.ID)
	require.NoError(t, s.stop(t))
	require.NoError(t, a.stop(t))
	noLeaks(t)
}

// failingJobs fails a lease's first job with a fencing error, then runs.
type failingJobs struct {
	*recorder
	mu     sync.Mutex
	failed map[string]bool
}

func (f *failingJobs) Run(ctx context.Context, l cluster.Lease) error {
	f.mu.Lock()
	first := !f.failed[l.Scope]
	f.failed[l.Scope] = true
	f.mu.Unlock()
	if first {
		return fmt.Errorf("write: %w", pgstore.ErrFenced)
	}
	return f.recorder.Run(ctx, l)
}

// TestJobErrorDropsLease: a job that returns an error is dropped; the
// lease is handed back and taken again under a new epoch.
func TestJobErrorDropsLease(t *testing.T) {
	pool, _ := pgtest.Pool(t)
	createTable(t, pool, "err", 1)
	rec := newRecorder()
	c, err := cluster.New(pool, cluster.Config{NodeID: "a", LeaseTTL: testTTL}, &failingJobs{recorder: rec, failed: map[string]bool{}})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	eventually(t, 5*time.Second, "jobs run at epoch 2", func() bool {
		running := rec.snapshot()
		if len(running) != 2 {
			return false
		}
		for _, l := range running {
			if l.Epoch != 2 {
				return false
			}
		}
		return true
	})
	cancel()
	require.NoError(t, <-done)
	noLeaks(t)
}

func TestNewValidates(t *testing.T) {
	pool := &pgxpool.Pool{}
	_, err := cluster.New(pool, cluster.Config{}, newRecorder())
	require.Error(t, err)
	_, err = cluster.New(pool, cluster.Config{NodeID: "a", Roles: []string{"janitor"}}, newRecorder())
	require.Error(t, err)
	_, err = cluster.New(pool, cluster.Config{NodeID: "a", LeaseTTL: time.Second, SafetyMargin: time.Second / 2}, newRecorder())
	require.Error(t, err)
	_, err = cluster.New(pool, cluster.Config{NodeID: "a", MaxPartitions: -1}, newRecorder())
	require.Error(t, err)
	c, err := cluster.New(pool, cluster.Config{NodeID: "a"}, newRecorder())
	require.NoError(t, err)
	require.Equal(t, 30*time.Second, cluster.ConfigOf(c).LeaseTTL)
	require.Equal(t, 5*time.Second, cluster.ConfigOf(c).SafetyMargin)
	require.Equal(t, []string{cluster.RoleIndexer, cluster.RoleServer}, cluster.ConfigOf(c).Roles)
	require.False(t, c.Ready())
	require.Empty(t, c.Members())
	require.Empty(t, c.Held())
	require.True(t, errors.Is(cluster.ErrRunning, cluster.ErrRunning))
}

// A second live process with the same node id registers nothing, takes
// nothing, and on stop leaves the first one's row and leases alone.
func TestDuplicateNodeID(t *testing.T) {
	pool, _ := pgtest.Pool(t)
	ctx := context.Background()
	createTable(t, pool, "dup", 4)
	first := startNode(t, pool, "a")
	eventually(t, 3*testTTL, "a holds 4 partitions and the writer", func() bool {
		parts, writers := heldBy(leaseRows(t, pool))
		return parts["a"] == 4 && len(writers) == 1
	})
	before := leaseRows(t, pool)

	second := startNode(t, pool, "a")
	time.Sleep(testTTL)
	require.Empty(t, second.rec.snapshot(), "the duplicate runs no job")
	require.Equal(t, before, leaseRows(t, pool), "no lease changed hands")
	require.NoError(t, second.stop(t))

	var n int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM nodes WHERE id = 'a' AND expires_at > now()`).Scan(&n))
	require.Equal(t, 1, n, "the first process's row survives the duplicate's stop")
	require.Equal(t, before, leaseRows(t, pool), "and so do its leases")
	require.Len(t, first.rec.snapshot(), 5)
	require.NoError(t, first.stop(t))
	noLeaks(t)
}

// TestStartingAgainAfterTrustEnded: a node is Starting in its first
// lease_ttl/3, and again after its trust window ended (back after an
// outage longer than lease_ttl), not after an ordinary round.
func TestStartingAgainAfterTrustEnded(t *testing.T) {
	pool, _ := pgtest.Pool(t)
	c, err := cluster.New(pool, cluster.Config{NodeID: "n", LeaseTTL: 3 * time.Second}, newRecorder())
	require.NoError(t, err)
	interval := time.Second
	t0 := time.Now()
	require.True(t, cluster.StartingAt(c, t0, false), "first round")
	require.True(t, cluster.StartingAt(c, t0.Add(interval/2), true), "a round on notice within the first interval")
	require.False(t, cluster.StartingAt(c, t0.Add(interval), true), "the next timed round")
	require.False(t, cluster.StartingAt(c, t0.Add(5*interval), true), "later rounds while trusted")
	back := t0.Add(20 * interval)
	require.True(t, cluster.StartingAt(c, back, false), "the first round after the trust window ended")
	require.True(t, cluster.StartingAt(c, back.Add(interval-time.Millisecond), true))
	require.False(t, cluster.StartingAt(c, back.Add(interval), true))
}
