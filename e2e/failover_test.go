package e2e

// The failure rows of docs/design.md §3.4, played with real `mink serve`
// processes (internal/clustertest): a crash, a join, a clean stop, a long
// pause, and nodes with one role each. Every test produces continuously
// while the failure happens and ends with the table exact.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/cluster"
	"github.com/minkhq/mink/internal/clustertest"
	"github.com/minkhq/mink/internal/testkit"
)

const (
	ttl   = clustertest.DefaultLeaseTTL
	round = ttl / 3
	// tolerance absorbs polling (25–100 ms), round durations and a loaded
	// two-core machine.
	tolerance = 500 * time.Millisecond
	// rate of the continuous producer, records per second.
	rate = 200
)

// failoverEnv starts n nodes, a table test.events over topic events with
// the given partitions, a producer, and waits for the leases to settle
// evenly.
func failoverEnv(t *testing.T, nodes, partitions int, template ...clustertest.NodeOptions) (*clustertest.Env, int64, *clustertest.Producer, clustertest.Leases) {
	t.Helper()
	env := clustertest.New(t)
	var opts clustertest.NodeOptions
	if len(template) > 0 {
		opts = template[0]
	}
	for i := 0; i < nodes; i++ {
		env.StartNode(opts)
	}
	env.CreateRawTable(env.Nodes()[0].URL(), "test", "events", "events", partitions)
	id := env.TableID(t, "test.events")
	prod := env.StartProducer("events", partitions, rate)
	ls := env.WaitBalanced(t, id, 20*time.Second, evenCounts(env.Running(), partitions))
	prod.WaitMore(t, rate/2, 10*time.Second)
	return env, id, prod, ls
}

// evenCounts is the spread of partitions over nodes the sharing rules
// settle on when partitions divide evenly.
func evenCounts(nodes []*clustertest.Node, partitions int) map[string]int {
	out := map[string]int{}
	for _, n := range nodes {
		out[n.ID] = partitions / len(nodes)
	}
	return out
}

// writerNode returns the node that holds the writer lease in ls, the
// other running nodes, and its leases: the writer's and two partitions'.
func writerNode(t *testing.T, env *clustertest.Env, ls clustertest.Leases) (*clustertest.Node, []*clustertest.Node, []clustertest.Lease) {
	t.Helper()
	victim := env.Node(ls.Writer())
	held := ls.HeldBy(victim.ID)
	require.Len(t, held, 3)
	return victim, others(env, victim), held
}

func others(env *clustertest.Env, not *clustertest.Node) []*clustertest.Node {
	var out []*clustertest.Node
	for _, n := range env.Running() {
		if n != not {
			out = append(out, n)
		}
	}
	return out
}

func ids(nodes []*clustertest.Node) []string {
	var out []string
	for _, n := range nodes {
		out = append(out, n.ID)
	}
	return out
}

// finish stops the producer, reads the table through node, and checks
// the indexed ranges.
func finish(t *testing.T, env *clustertest.Env, id int64, prod *clustertest.Producer, node *clustertest.Node) {
	t.Helper()
	produced := prod.Stop(t)
	clustertest.WaitExact(t, node.URL(), "test.events", produced)
	writers := env.CheckRangesTile(t, id, produced)
	t.Logf("%d records produced; ranges per holder@epoch: %v", len(produced.Records), writers)
}

// §3.4 "a node crashes": its leases expire after lease_ttl; others take
// them; indexing resumes from the indexed ranges (no gap, no overlap).
func TestFailoverCrash(t *testing.T) {
	env, id, prod, ls := failoverEnv(t, 3, 6)
	victim := env.Node(ls.Writer()) // holds the writer lease too
	survivors := others(env, victim)

	killAt := env.DBNow(t)
	victim.Kill()
	// Read after the process is gone: these are its last renewals. (A
	// renewal in flight at the kill that commits after this read only
	// moves the real expiry later, which the bound below tolerates.)
	old := env.Leases(t, id).HeldBy(victim.ID)
	require.Len(t, old, 3, "victim %s held 2 partitions and the writer", victim.ID)
	for _, l := range old {
		require.True(t, l.ExpiresAt.After(killAt), "lease %s had expired before the kill", l.Scope)
		require.Greater(t, l.ExpiresAt.Sub(killAt), ttl-round-tolerance,
			"lease %s was renewed in the last round before the kill", l.Scope)
	}

	tos := env.WaitTakeovers(t, id, old, ttl, ttl+2*round+5*time.Second)
	var longest time.Duration
	for _, to := range tos {
		afterKill, afterExpiry := to.TakenAt.Sub(killAt), to.TakenAt.Sub(to.OldExpires)
		longest = max(longest, afterKill)
		t.Logf("takeover %s: %s@%d -> %s@%d, %s after the kill, %s after the old expires_at (seen %s after the kill)",
			to.Scope, to.From, to.OldEpoch, to.To, to.NewEpoch, afterKill.Round(time.Millisecond),
			afterExpiry.Round(time.Millisecond), to.SeenAt.Sub(killAt).Round(time.Millisecond))
		require.Contains(t, ids(survivors), to.To, "lease %s taken by a live node", to.Scope)
		require.Equal(t, to.OldEpoch+1, to.NewEpoch, "lease %s: one take, one epoch", to.Scope)
		// Never before the old holding expired (database clock; the take's
		// UPDATE only matches expires_at < now()).
		require.False(t, to.TakenAt.Before(to.OldExpires),
			"lease %s taken at %s, before the old holding expired at %s", to.Scope, to.TakenAt, to.OldExpires)
		require.LessOrEqual(t, afterKill, ttl+2*round+tolerance,
			"lease %s taken %s after the kill; the bound is lease_ttl + two rounds", to.Scope, afterKill)
	}
	t.Logf("crash takeover: every lease of %s taken within %s of SIGKILL (lease_ttl %s, bound %s)",
		victim.ID, longest.Round(time.Millisecond), ttl, ttl+2*round+tolerance)

	rows := env.NodeRows(t)
	require.False(t, rows[victim.ID].Live, "the crashed node's row has expired")
	counts := map[string]int{}
	for _, n := range survivors {
		counts[n.ID] = 3
	}
	env.WaitBalanced(t, id, 10*time.Second, counts)
	prod.WaitMore(t, rate/2, 10*time.Second)
	finish(t, env, id, prod, survivors[0])
}

// lossEvent is a node seen holding fewer partition leases than in the
// previous sample.
type lossEvent struct {
	node string
	at   time.Time
	lost []string
}

// losses lists, per node, the partition leases it held in one sample and
// not in the next.
func losses(samples []clustertest.Leases) map[string][]lossEvent {
	out := map[string][]lossEvent{}
	for i := 1; i < len(samples); i++ {
		prev, cur := samples[i-1], samples[i]
		lost := map[string][]string{}
		for _, l := range prev.Leases {
			if l.Kind != "partition" || l.Free {
				continue
			}
			if c, ok := cur.ByScope(l.Scope); !ok || !c.HeldBy(l.Holder) {
				lost[l.Holder] = append(lost[l.Holder], l.Scope)
			}
		}
		for n, scopes := range lost {
			out[n] = append(out[n], lossEvent{node: n, at: cur.At, lost: scopes})
		}
	}
	return out
}

// longestFree is the longest a partition lease was seen free.
func longestFree(samples []clustertest.Leases) (time.Duration, string) {
	since := map[string]time.Time{}
	var longest time.Duration
	var which string
	for _, s := range samples {
		for _, l := range s.Leases {
			if l.Kind != "partition" {
				continue
			}
			if !l.Free {
				delete(since, l.Scope)
				continue
			}
			if _, ok := since[l.Scope]; !ok {
				since[l.Scope] = s.At
			}
			if d := s.At.Sub(since[l.Scope]); d > longest {
				longest, which = d, l.Scope
			}
		}
	}
	return longest, which
}

// §3.4 "a node joins": every share drops; others hand back one partition
// per table per round. One node holds all six partitions, a second joins
// (3/3), then a third (2/2/2).
func TestFailoverJoin(t *testing.T) {
	env, id, prod, _ := failoverEnv(t, 1, 6)
	first := env.Nodes()[0]
	const period = 100 * time.Millisecond
	sampler := env.SampleLeases(id, period)

	joinAt := map[string]time.Time{}
	second := env.StartNode(clustertest.NodeOptions{})
	joinAt[second.ID] = env.DBNow(t)
	env.WaitBalanced(t, id, 15*time.Second, map[string]int{first.ID: 3, second.ID: 3})
	evenAt2 := env.DBNow(t)
	third := env.StartNode(clustertest.NodeOptions{})
	joinAt[third.ID] = env.DBNow(t)
	env.WaitBalanced(t, id, 15*time.Second, map[string]int{first.ID: 2, second.ID: 2, third.ID: 2})
	evenAt3 := env.DBNow(t)
	samples := sampler.Stop()
	t.Logf("%d lease samples every %s; 1→2 nodes even %s after the second registered, 2→3 even %s after the third",
		len(samples), period, evenAt2.Sub(joinAt[second.ID]).Round(time.Millisecond), evenAt3.Sub(joinAt[third.ID]).Round(time.Millisecond))
	require.Greater(t, len(samples), 20)

	// Gradual: no node loses two partition leases within one round.
	ev := losses(samples)
	require.Len(t, ev[first.ID], 4, "the first node hands back 3 partitions, then 1: %v", ev[first.ID])
	require.Len(t, ev[second.ID], 1, "the second node hands back 1 partition: %v", ev[second.ID])
	require.Empty(t, ev[third.ID])
	minGap := time.Duration(1 << 62)
	for n, events := range ev {
		for i, e := range events {
			require.Len(t, e.lost, 1, "%s lost %v at once", n, e.lost)
			if i > 0 {
				gap := e.at.Sub(events[i-1].at)
				minGap = min(minGap, gap)
				// Another round: two losses of one round are a sampling
				// period apart at most; rounds run on a ticker, so one that
				// a loaded machine delayed can come well under a round
				// before the next (641 ms of a 1 s round seen in a loaded
				// full run).
				require.GreaterOrEqual(t, gap, round/2,
					"%s lost %v then %v only %s apart: more than one per round", n, events[i-1].lost, e.lost, gap)
			}
		}
	}
	free, scope := longestFree(samples)
	t.Logf("hand-back: shortest gap between two losses of one node %s (round %s); longest a partition stayed free %s (%s)",
		minGap.Round(time.Millisecond), round, free.Round(time.Millisecond), scope)
	require.LessOrEqual(t, free, round+tolerance, "a handed-back partition is taken within a round")

	// The admin API agrees: 2/2/2.
	require.Equal(t, map[string]int{first.ID: 2, second.ID: 2, third.ID: 2},
		clustertest.AdminPartitionCounts(t, third.URL(), "test.events"))
	prod.WaitMore(t, rate/2, 10*time.Second)
	finish(t, env, id, prod, third)
}

// §3.1 clean stop: stop jobs, release every lease, delete the row; the
// others see the node gone at once and take its leases in their next round.
func TestFailoverCleanStop(t *testing.T) {
	env, id, prod, ls := failoverEnv(t, 3, 6)
	victim, survivors, old := writerNode(t, env, ls)

	victim.Stop()
	exitAt := env.DBNow(t)
	rows := env.NodeRows(t)
	now := env.Leases(t, id)
	checked := time.Since(victim.ExitedAt())
	require.LessOrEqual(t, checked, 300*time.Millisecond, "the check runs right after the exit")
	_, ok := rows[victim.ID]
	require.False(t, ok, "the node row is deleted at a clean stop: %+v", rows)
	for _, o := range old {
		l, _ := now.ByScope(o.Scope)
		require.NotEqual(t, victim.ID, l.Holder, "lease %s released at a clean stop", o.Scope)
	}
	t.Logf("clean stop: row and leases of %s gone, checked %s after the process exited",
		victim.ID, checked.Round(time.Millisecond))
	require.NotEmpty(t, victim.LogLines("cluster: stopped"))
	nodes, err := clustertest.AdminNodes(context.Background(), survivors[0].URL())
	require.NoError(t, err)
	for _, n := range nodes {
		require.NotEqual(t, victim.ID, n.ID, "GET /admin/v1/nodes still lists the stopped node")
	}

	tos := env.WaitTakeovers(t, id, old, ttl, round+5*time.Second)
	var longest time.Duration
	for _, to := range tos {
		after := to.TakenAt.Sub(exitAt)
		longest = max(longest, after)
		t.Logf("takeover %s: %s@%d -> %s@%d, %s after the exit", to.Scope, to.From, to.OldEpoch, to.To, to.NewEpoch,
			after.Round(time.Millisecond))
		require.Contains(t, ids(survivors), to.To)
		require.LessOrEqual(t, after, round+tolerance, "lease %s taken within a round of the clean stop", to.Scope)
	}
	t.Logf("clean-stop takeover: every lease of %s taken within %s of its exit (round %s)",
		victim.ID, max(0, longest).Round(time.Millisecond), round)
	env.WaitBalanced(t, id, 10*time.Second, map[string]int{survivors[0].ID: 3, survivors[1].ID: 3})
	prod.WaitMore(t, rate/2, 10*time.Second)
	finish(t, env, id, prod, survivors[1])
}

// A node stopped (SIGSTOP) for longer than lease_ttl: its leases expire
// and others take them; when it runs again its writes under the old
// epochs are rejected by Postgres, it stops those jobs, and the table
// stays exact.
func TestFailoverPausedNode(t *testing.T) {
	env, id, prod, ls := failoverEnv(t, 3, 6)
	victim, survivors, _ := writerNode(t, env, ls)

	pauseAt := env.DBNow(t)
	victim.Pause()
	pausedAt := time.Now()
	old := env.Leases(t, id).HeldBy(victim.ID) // as of the pause
	require.Len(t, old, 3)
	tos := env.WaitTakeovers(t, id, old, ttl, ttl+2*round+5*time.Second)
	takenAt := map[string]time.Time{}
	for _, to := range tos {
		takenAt[to.Scope] = to.TakenAt
		t.Logf("takeover %s: %s@%d -> %s@%d, %s after SIGSTOP", to.Scope, to.From, to.OldEpoch, to.To, to.NewEpoch,
			to.TakenAt.Sub(pauseAt).Round(time.Millisecond))
		require.Contains(t, ids(survivors), to.To)
		require.False(t, to.TakenAt.Before(to.OldExpires), "lease %s taken before it expired", to.Scope)
	}
	if d := 5*time.Second - time.Since(pausedAt); d > 0 {
		time.Sleep(d) // paused for at least 5 s, longer than lease_ttl
	}
	logBefore := len(victim.Log())
	victim.Resume()
	resumedAt := time.Now()
	t.Logf("%s paused for %s", victim.ID, resumedAt.Sub(pausedAt).Round(time.Millisecond))

	// It finds out: a renewal without its leases ("lease lost"), a write
	// rejected by the fencing check ("fenced"), or the trust window ended.
	testkit.Eventually(t, 10*time.Second, 50*time.Millisecond, victim.ID+" noticing its lost leases", func() (bool, string) {
		tail := victim.Log()[logBefore:]
		return strings.Contains(tail, "lease lost"), lastLines(tail, 5)
	})
	tail := victim.Log()[logBefore:]
	lost := strings.Count(tail, "cluster: lease lost")
	fenced := strings.Count(tail, "fenced")
	trust := strings.Count(tail, "trust window ended")
	t.Logf("after SIGCONT %s logged %d \"lease lost\", %d \"fenced\", %d \"trust window ended\"", victim.ID, lost, fenced, trust)
	for _, l := range strings.Split(tail, "\n") {
		if strings.Contains(l, "fenced") || strings.Contains(l, "lease lost") {
			t.Logf("  %s", l)
		}
	}
	require.Equal(t, 3, lost, "every lease of the paused node is lost")

	// Postgres kept nothing it wrote under an old epoch after the takeover.
	for _, o := range old {
		var ranges, snapshots int
		err := env.Pool().QueryRow(context.Background(), `
			SELECT (SELECT count(*) FROM ranges WHERE lease_scope = $1 AND lease_holder = $2 AND lease_epoch = $3 AND created_at >= $4),
			       (SELECT count(*) FROM snapshots WHERE lease_scope = $1 AND lease_holder = $2 AND lease_epoch = $3 AND committed_at >= $4)`,
			o.Scope, victim.ID, o.Epoch, takenAt[o.Scope]).Scan(&ranges, &snapshots)
		require.NoError(t, err)
		require.Zero(t, ranges+snapshots, "%s wrote under %s epoch %d after the takeover", victim.ID, o.Scope, o.Epoch)
	}
	// It is a member again and takes its share back.
	env.WaitBalanced(t, id, 15*time.Second, evenCounts(env.Running(), 6))
	prod.WaitMore(t, rate/2, 10*time.Second)
	finish(t, env, id, prod, survivors[0])
}

// A lease taken from under a running holder (as when a holder's pause
// outlasts its lease and it runs again before its next renewal): its next
// writes under the old epoch are rejected by Postgres ("fenced"), the
// node stops those jobs, and the table stays exact. The steal lands right
// after a renewal, so the holder writes (every flush interval) long before
// its next renewal (a round later) could tell it.
func TestFailoverFencedWrite(t *testing.T) {
	env, id, prod, ls := failoverEnv(t, 2, 4)
	writer := env.Node(ls.Writer())
	// The writer lease, and the partition leases of the writer's node.
	stolen := ls.HeldBy(writer.ID)
	require.Len(t, stolen, 3, "the writer lease and two partition leases of %s", writer.ID)
	logBefore := len(writer.Log())

	// Wait for a renewal (expires_at moves), then steal at once.
	first := stolen[0].ExpiresAt
	env.WaitLeases(t, id, 5*time.Second, "a renewal", func(ls clustertest.Leases) bool {
		l, _ := ls.ByScope(stolen[0].Scope)
		return l.ExpiresAt.After(first)
	})
	var stealAt time.Time
	for _, l := range stolen {
		err := env.Pool().QueryRow(context.Background(), `
			UPDATE leases SET holder = 'thief', epoch = epoch + 1, expires_at = now() + interval '3 seconds'
			WHERE scope = $1 AND holder = $2 AND epoch = $3 RETURNING now()`, l.Scope, writer.ID, l.Epoch).Scan(&stealAt)
		require.NoError(t, err, "steal %s", l.Scope)
	}
	// The node drops each stolen lease (its renewal misses it, or the job
	// it stopped returned the fencing error).
	testkit.Eventually(t, 5*time.Second, 20*time.Millisecond, writer.ID+" dropping the stolen leases", func() (bool, string) {
		tail := writer.Log()[logBefore:]
		for _, l := range stolen {
			if !slices.ContainsFunc(strings.Split(tail, "\n"), func(line string) bool {
				return strings.Contains(line, "scope="+l.Scope+" ") &&
					(strings.Contains(line, "cluster: lease lost") || strings.Contains(line, "dropping the lease"))
			}) {
				return false, lastLines(tail, 5)
			}
		}
		return true, ""
	})
	tail := writer.Log()[logBefore:]
	var fenced []string
	for _, l := range strings.Split(tail, "\n") {
		if strings.Contains(l, "fenced") || strings.Contains(l, "lease lost") || strings.Contains(l, "dropping the lease") {
			t.Logf("  %s", l)
		}
		if strings.Contains(l, "fenced, stopping") {
			fenced = append(fenced, l)
		}
	}
	require.NotEmpty(t, fenced, "a write under a stolen epoch was rejected by Postgres")
	require.Contains(t, tail, "epoch", "the rejection names the epoch")
	// Postgres kept nothing written under the old epochs after the steal.
	for _, o := range stolen {
		var n int
		require.NoError(t, env.Pool().QueryRow(context.Background(), `
			SELECT (SELECT count(*) FROM ranges WHERE lease_scope = $1 AND lease_epoch = $2 AND created_at >= $3)
			     + (SELECT count(*) FROM snapshots WHERE lease_scope = $1 AND lease_epoch = $2 AND committed_at >= $3)`,
			o.Scope, o.Epoch, stealAt).Scan(&n))
		require.Zero(t, n, "a write under %s epoch %d after the steal", o.Scope, o.Epoch)
	}
	// The thief never renews: the leases expire and the nodes share them again.
	env.WaitBalanced(t, id, ttl+2*round+5*time.Second, evenCounts(env.Running(), 4))
	prod.WaitMore(t, rate/2, 10*time.Second)
	finish(t, env, id, prod, writer)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Roles: an indexer-only node holds the leases and serves no file; a
// server-only node serves reads (catalog and S3) and holds no lease.
func TestFailoverRoles(t *testing.T) {
	env := clustertest.New(t)
	ix := env.StartNode(clustertest.NodeOptions{ID: "indexer-only", Roles: []string{cluster.RoleIndexer}})
	srv := env.StartNode(clustertest.NodeOptions{ID: "server-only", Roles: []string{cluster.RoleServer}})
	env.CreateRawTable(srv.URL(), "test", "events", "events", 4)
	id := env.TableID(t, "test.events")
	sampler := env.SampleLeases(id, 100*time.Millisecond)
	prod := env.StartProducer("events", 4, rate)
	env.WaitBalanced(t, id, 20*time.Second, map[string]int{ix.ID: 4})
	prod.WaitMore(t, rate, 10*time.Second)

	nodes, err := clustertest.AdminNodes(context.Background(), srv.URL())
	require.NoError(t, err)
	require.Len(t, nodes, 2)
	for _, n := range nodes {
		switch n.ID {
		case ix.ID:
			require.Equal(t, []string{cluster.RoleIndexer}, n.Roles)
			require.Len(t, n.Leases, 5, "4 partitions and the writer")
		case srv.ID:
			require.Equal(t, []string{cluster.RoleServer}, n.Roles)
			require.Empty(t, n.Leases)
		}
	}

	// A committed data file: the server node serves it (it is its owner:
	// the only live server node); the indexer node answers 404.
	var path string
	var size int64
	testkit.Eventually(t, 20*time.Second, 100*time.Millisecond, "a committed data file", func() (bool, string) {
		err := env.Pool().QueryRow(context.Background(), `
			SELECT path, file_size FROM data_files WHERE table_id = $1 AND committed_snapshot_id IS NOT NULL
			ORDER BY created_at LIMIT 1`, id).Scan(&path, &size)
		return err == nil, fmt.Sprint(err)
	})
	var members []cluster.Member
	for _, r := range env.NodeRows(t) {
		members = append(members, cluster.Member{ID: r.ID, Roles: r.Roles})
	}
	owner, ok := cluster.Owner(members, path)
	require.True(t, ok)
	require.Equal(t, srv.ID, owner.ID, "the owner of a file is a server node")

	status, body := get(t, ix.URL()+"/mink/"+path)
	require.Equal(t, http.StatusNotFound, status, "the indexer-only node serves no file: %s", body)
	status, body = get(t, srv.URL()+"/mink/"+path)
	require.Equal(t, http.StatusOK, status)
	require.EqualValues(t, size, len(body), "served bytes match file_size")

	prod.WaitMore(t, rate/2, 10*time.Second)
	produced := prod.Stop(t)
	clustertest.WaitExact(t, srv.URL(), "test.events", produced)
	env.CheckRangesTile(t, id, produced)

	samples := sampler.Stop()
	holders := map[string]bool{}
	for _, s := range samples {
		for _, l := range s.Leases {
			if !l.Free {
				holders[l.Holder] = true
			}
		}
	}
	got := make([]string, 0, len(holders))
	for h := range holders {
		got = append(got, h)
	}
	sort.Strings(got)
	require.Equal(t, []string{ix.ID}, got, "only the indexer node ever held a lease (%d samples)", len(samples))
	// The server node built what it served from Kafka: it never indexed.
	require.Empty(t, srv.LogLines("indexer: started"))
	require.NotEmpty(t, ix.LogLines("indexer: started"))
}

func get(t *testing.T, url string) (int, []byte) {
	t.Helper()
	resp, b := testkit.Get(t, url)
	return resp.StatusCode, b
}

// TestFailoverSoak randomly crashes, clean-stops, pauses and adds nodes
// under continuous produce for MINK_SOAK_DURATION (e.g. 2m; `make soak
// DURATION=2m`), then checks the table is exact. Skipped when unset.
func TestFailoverSoak(t *testing.T) {
	d, err := time.ParseDuration(os.Getenv("MINK_SOAK_DURATION"))
	if err != nil || d <= 0 {
		t.Skip("set MINK_SOAK_DURATION (e.g. 2m) to run the soak")
	}
	seed := uint64(time.Now().UnixNano())
	if s, err := strconv.ParseUint(os.Getenv("MINK_SOAK_SEED"), 10, 64); err == nil {
		seed = s
	}
	t.Logf("soak for %s, seed %d (MINK_SOAK_SEED)", d, seed)
	rng := rand.New(rand.NewPCG(seed, 1))

	// Ranges and commits once a second: a 200 ms flush under churn makes
	// tens of thousands of small files, which the final read then builds
	// one by one (small-file assembly is not there yet).
	nodeOpts := clustertest.NodeOptions{FlushInterval: time.Second, CommitInterval: time.Second}
	env, id, prod, _ := failoverEnv(t, 3, 6, nodeOpts)
	deadline := time.Now().Add(d)
	actions := map[string]int{}
	var dead []string // ids of crashed nodes, restarted under the same id later
	for time.Now().Before(deadline) {
		running := env.Running()
		pick := running[rng.IntN(len(running))]
		switch r := rng.IntN(100); {
		case r < 25 && len(running) >= 2:
			t.Logf("soak: crash %s", pick.ID)
			pick.Kill()
			dead = append(dead, pick.ID)
			actions["crash"]++
		case r < 45 && len(running) >= 2:
			t.Logf("soak: clean stop %s", pick.ID)
			pick.Stop()
			actions["stop"]++
		case r < 60 && len(running) >= 2:
			p := 4*time.Second + time.Duration(rng.IntN(3000))*time.Millisecond
			t.Logf("soak: pause %s for %s", pick.ID, p)
			pick.Pause()
			time.Sleep(p)
			pick.Resume()
			actions["pause"]++
		case len(running) < 5:
			opts := nodeOpts
			if len(dead) > 0 && rng.IntN(2) == 0 {
				opts.ID, dead = dead[0], dead[1:] // restart a crashed node under its id
			}
			n := env.StartNode(opts)
			t.Logf("soak: start %s", n.ID)
			actions["start"]++
		default:
			continue
		}
		// Every lease held again by a running node, within lease_ttl and
		// two rounds of any failure (plus slack for a loaded machine).
		live := ids(env.Running())
		env.WaitLeases(t, id, ttl+2*round+10*time.Second, "every lease held by a running node", func(ls clustertest.Leases) bool {
			for _, l := range ls.Leases {
				if l.Free || !slices.Contains(live, l.Holder) {
					return false
				}
			}
			return true
		})
		time.Sleep(time.Duration(500+rng.IntN(2500)) * time.Millisecond)
	}
	t.Logf("soak: actions %v; %d records acknowledged; running %v", actions, prod.Count(), ids(env.Running()))
	finish(t, env, id, prod, env.Running()[0])
}
