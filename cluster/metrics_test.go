package cluster_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/cluster"
	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/internal/testkit"
)

// metricValue returns the value of the counter or gauge name whose labels
// include the given name/value pairs; it fails when there is none.
func metricValue(t *testing.T, g prometheus.Gatherer, name string, labels ...string) float64 {
	t.Helper()
	v, ok := testkit.MetricValue(t, g, name, labels...)
	require.True(t, ok, "no metric %s%v", name, labels)
	return v
}

// leaseCounts is one node's lease metrics for one kind.
type leaseCounts struct{ takes, releases, losses, held float64 }

func countsOf(t *testing.T, g prometheus.Gatherer, kind string) leaseCounts {
	t.Helper()
	var lost float64
	for _, r := range []string{cluster.LossRenewalMissing, cluster.LossNotInDatabase, cluster.LossJobFailed, cluster.LossAbandoned, cluster.LossDeleted} {
		lost += metricValue(t, g, "mink_lease_losses_total", "kind", kind, "reason", r)
	}
	return leaseCounts{
		takes:    metricValue(t, g, "mink_lease_takes_total", "kind", kind),
		releases: metricValue(t, g, "mink_lease_releases_total", "kind", kind),
		losses:   lost,
		held:     metricValue(t, g, "mink_leases_held", "kind", kind),
	}
}

func withRegistry(reg prometheus.Registerer) func(*cluster.Config) {
	return func(c *cluster.Config) { c.Registerer = reg }
}

// TestLeaseMetrics follows one node's lease counters through convergence,
// a lease stolen in the database, a second node joining and stopping
// cleanly, and a crash (docs/design.md §3.2, §5 "metrics").
func TestLeaseMetrics(t *testing.T) {
	pool, _ := pgtest.Pool(t)
	ctx := context.Background()
	id := createTable(t, pool, "metrics", 4)
	writer := fmt.Sprintf("%d/writer", id)
	regA := prometheus.NewRegistry()
	a := startNode(t, pool, "a", withRegistry(regA))

	// Converged alone: 4 partitions and the writer, each taken once.
	eventually(t, 5*time.Second, "a holds 4 partitions and the writer", func() bool {
		rows := leaseRows(t, pool)
		parts, writers := heldBy(rows)
		return parts["a"] == 4 && writers[writer] == "a" && jobsMatch(rows, a)
	})
	require.Equal(t, leaseCounts{takes: 4, held: 4}, countsOf(t, regA, cluster.KindPartition))
	require.Equal(t, leaseCounts{takes: 1, held: 1}, countsOf(t, regA, cluster.KindWriter))
	require.Positive(t, metricValue(t, regA, "mink_cluster_rounds_total", "result", "ok"))

	// Another holder takes partition 0 in the database (epoch + 1): a
	// loses it at its next round, by its renewal (or, when the steal lands
	// between its renewal and its read, by the read).
	stolen := fmt.Sprintf("%d/partition/0", id)
	testkit.Take(t, pool, stolen, "x")
	eventually(t, 5*time.Second, "a drops the stolen lease", func() bool {
		_, ok := a.rec.snapshot()[stolen]
		return !ok && len(a.c.Held()) == 4
	})
	require.Equal(t, leaseCounts{takes: 4, losses: 1, held: 3}, countsOf(t, regA, cluster.KindPartition))
	require.Equal(t, 1.0,
		metricValue(t, regA, "mink_lease_losses_total", "kind", "partition", "reason", cluster.LossRenewalMissing)+
			metricValue(t, regA, "mink_lease_losses_total", "kind", "partition", "reason", cluster.LossNotInDatabase))
	require.Zero(t, metricValue(t, regA, "mink_lease_losses_total", "kind", "partition", "reason", cluster.LossJobFailed))

	// The thief lets go; a takes it back under a new epoch.
	_, err := pool.Exec(ctx, `UPDATE leases SET holder = NULL, expires_at = NULL WHERE scope = $1`, stolen)
	require.NoError(t, err)
	eventually(t, 5*time.Second, "a takes partition 0 back", func() bool {
		rows := leaseRows(t, pool)
		parts, _ := heldBy(rows)
		return parts["a"] == 4 && jobsMatch(rows, a)
	})
	require.Equal(t, leaseCounts{takes: 5, losses: 1, held: 4}, countsOf(t, regA, cluster.KindPartition))

	// b joins: a hands back 2 partitions, and the writer if b prefers it.
	regB := prometheus.NewRegistry()
	b := startNode(t, pool, "b", withRegistry(regB))
	top := cluster.TopNode([]string{"a", "b"}, writer)
	eventually(t, 10*time.Second, "2 partitions each, writer at "+top, func() bool {
		rows := leaseRows(t, pool)
		parts, writers := heldBy(rows)
		return parts["a"] == 2 && parts["b"] == 2 && writers[writer] == top && jobsMatch(rows, a, b)
	})
	bWriter := 0.0
	if top == "b" {
		bWriter = 1
	}
	require.Equal(t, leaseCounts{takes: 5, releases: 2, losses: 1, held: 2}, countsOf(t, regA, cluster.KindPartition))
	require.Equal(t, leaseCounts{takes: 1, releases: bWriter, held: 1 - bWriter}, countsOf(t, regA, cluster.KindWriter))
	require.Equal(t, leaseCounts{takes: 2, held: 2}, countsOf(t, regB, cluster.KindPartition))
	require.Equal(t, leaseCounts{takes: bWriter, held: bWriter}, countsOf(t, regB, cluster.KindWriter))

	// b stops cleanly: it releases everything it held.
	require.NoError(t, b.stop(t))
	require.Equal(t, leaseCounts{takes: 2, releases: 2}, countsOf(t, regB, cluster.KindPartition))
	require.Equal(t, leaseCounts{takes: bWriter, releases: bWriter}, countsOf(t, regB, cluster.KindWriter))
	eventually(t, 5*time.Second, "a holds everything again", func() bool {
		rows := leaseRows(t, pool)
		parts, writers := heldBy(rows)
		return parts["a"] == 4 && writers[writer] == "a" && jobsMatch(rows, a)
	})
	require.Equal(t, leaseCounts{takes: 7, releases: 2, losses: 1, held: 4}, countsOf(t, regA, cluster.KindPartition))
	require.Equal(t, leaseCounts{takes: 1 + bWriter, releases: bWriter, held: 1}, countsOf(t, regA, cluster.KindWriter))

	// a crashes: what it held is abandoned, not released.
	cluster.Crash(a.c)
	require.NoError(t, a.stop(t))
	require.Equal(t, leaseCounts{takes: 7, releases: 2, losses: 5}, countsOf(t, regA, cluster.KindPartition))
	require.Equal(t, 4.0, metricValue(t, regA, "mink_lease_losses_total", "kind", "partition", "reason", cluster.LossAbandoned))
	require.Equal(t, 1.0, metricValue(t, regA, "mink_lease_losses_total", "kind", "writer", "reason", cluster.LossAbandoned))
	require.Positive(t, metricValue(t, regB, "mink_cluster_rounds_total", "result", "ok"))
	noLeaks(t)
}

// TestDeletedTableLeasesEnd: deleting a table (mink table delete; its
// lease rows cascade) ends the node's jobs of it with reason "deleted",
// logged at Info, never as a lost lease: an alert on losses must not fire
// for a deletion. The leases of another table are untouched.
func TestDeletedTableLeasesEnd(t *testing.T) {
	pool, _ := pgtest.Pool(t)
	ctx := context.Background()
	deleted := createTable(t, pool, "gone", 3)
	kept := createTable(t, pool, "kept", 1)
	reg := prometheus.NewRegistry()
	var logs testkit.SyncBuffer
	a := startNode(t, pool, "a", withRegistry(reg), func(c *cluster.Config) {
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	eventually(t, 5*time.Second, "a holds both tables' leases", func() bool {
		return len(a.c.Held()) == 6 && len(a.rec.snapshot()) == 6
	})

	_, err := pool.Exec(ctx, `DELETE FROM tables WHERE id = $1`, deleted)
	require.NoError(t, err)
	eventually(t, 5*time.Second, "a's jobs of the deleted table end", func() bool {
		return len(a.c.Held()) == 2 && len(a.rec.snapshot()) == 2
	})
	for _, l := range a.c.Held() {
		require.Equal(t, kept, l.TableID)
	}
	require.Equal(t, 3.0, metricValue(t, reg, "mink_lease_losses_total", "kind", "partition", "reason", cluster.LossDeleted))
	require.Equal(t, 1.0, metricValue(t, reg, "mink_lease_losses_total", "kind", "writer", "reason", cluster.LossDeleted))
	for _, kind := range []string{cluster.KindPartition, cluster.KindWriter} {
		for _, r := range []string{cluster.LossRenewalMissing, cluster.LossNotInDatabase, cluster.LossJobFailed} {
			require.Zero(t, metricValue(t, reg, "mink_lease_losses_total", "kind", kind, "reason", r), kind+" "+r)
		}
		require.Equal(t, 1.0, metricValue(t, reg, "mink_leases_held", "kind", kind), kind)
	}
	out := logs.String()
	var ended []string
	for line := range strings.Lines(out) {
		if strings.Contains(line, `level=INFO msg="cluster: lease ended; its table was deleted"`) {
			require.Contains(t, line, fmt.Sprintf(" table=%d ", deleted))
			ended = append(ended, line)
		}
	}
	require.Len(t, ended, 4, out)
	require.NotContains(t, out, "lease lost")
	require.NotContains(t, out, "level=WARN")
}

// TestJobFailedMetrics: a job that fails drops its lease (a loss with
// reason job_failed); the lease is taken again, and released at stop.
// Two Clusters on one registry share the series.
func TestJobFailedMetrics(t *testing.T) {
	pool, _ := pgtest.Pool(t)
	createTable(t, pool, "jobfail", 1)
	reg := prometheus.NewRegistry()
	rec := newRecorder()
	c, err := cluster.New(pool, cluster.Config{NodeID: "a", LeaseTTL: testTTL, Registerer: reg},
		&failingJobs{recorder: rec, failed: map[string]bool{}})
	require.NoError(t, err)
	// A second Cluster registering on the same registry is tolerated.
	_, err = cluster.New(pool, cluster.Config{NodeID: "other", Registerer: reg}, newRecorder())
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	eventually(t, 5*time.Second, "jobs run at epoch 2", func() bool {
		return epochsAre(rec.snapshot(), 2)
	})
	for _, kind := range []string{cluster.KindPartition, cluster.KindWriter} {
		require.Equal(t, leaseCounts{takes: 2, losses: 1, held: 1}, countsOf(t, reg, kind), kind)
		require.Equal(t, 1.0, metricValue(t, reg, "mink_lease_losses_total", "kind", kind, "reason", cluster.LossJobFailed), kind)
	}
	cancel()
	require.NoError(t, <-done)
	for _, kind := range []string{cluster.KindPartition, cluster.KindWriter} {
		require.Equal(t, leaseCounts{takes: 2, releases: 1, losses: 1}, countsOf(t, reg, kind), kind)
	}
	noLeaks(t)
}

func epochsAre(running map[string]cluster.Lease, epoch int64) bool {
	if len(running) != 2 {
		return false
	}
	for _, l := range running {
		if l.Epoch != epoch {
			return false
		}
	}
	return true
}

// TestFencedWritesShared: the indexer and the writer share one metric,
// mink_fenced_writes_total{job}, on one registry; a nil registry counts
// without exporting.
func TestFencedWritesShared(t *testing.T) {
	reg := prometheus.NewRegistry()
	var wg sync.WaitGroup
	for _, job := range []string{cluster.JobIndexer, cluster.JobWriter, cluster.JobIndexer} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cluster.FencedWrites(reg, job).Inc()
		}()
	}
	wg.Wait()
	require.Equal(t, 2.0, metricValue(t, reg, "mink_fenced_writes_total", "job", cluster.JobIndexer))
	require.Equal(t, 1.0, metricValue(t, reg, "mink_fenced_writes_total", "job", cluster.JobWriter))
	cluster.FencedWrites(nil, cluster.JobWriter).Inc()
	require.Equal(t, 1.0, metricValue(t, reg, "mink_fenced_writes_total", "job", cluster.JobWriter))
}
