package cluster_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/cluster"
	"github.com/minkhq/mink/internal/pgtest"
)

// TestRoundsOnNotice: with lease_ttl 30 s (a round every 10 s), a table
// created is taken up, a table dropped is let go, and a stopped node's
// leases are taken over, each within a few seconds: the database's notice
// runs a round on every node at once (docs/design.md §3.1, §3.3; cluster/doc.go
// "When rounds run"). Nodes of another cluster (schema) are not woken.
func TestRoundsOnNotice(t *testing.T) {
	const ttl = 30 * time.Second
	const prompt = 3 * time.Second // well below a round (ttl/3)
	pool, _ := pgtest.Pool(t)
	withTTL := func(c *cluster.Config) { c.LeaseTTL = ttl }
	a := startNode(t, pool, "a", withTTL)
	b := startNode(t, pool, "b", withTTL)

	// A node of another cluster, in its own schema, counts its rounds.
	otherPool, _ := pgtest.Pool(t)
	reg := prometheus.NewRegistry()
	other := startNode(t, otherPool, "c", func(c *cluster.Config) { c.LeaseTTL = 2 * ttl; c.Registerer = reg })
	eventually(t, 5*time.Second, "the nodes are registered", func() bool {
		return a.c.Ready() && b.c.Ready() && other.c.Ready()
	})
	otherRounds := func() float64 {
		mfs, err := reg.Gather()
		require.NoError(t, err)
		for _, mf := range mfs {
			if mf.GetName() == "mink_cluster_rounds_total" {
				sum := 0.0
				for _, m := range mf.GetMetric() {
					sum += m.GetCounter().GetValue()
				}
				return sum
			}
		}
		return 0
	}
	// Its first round, and the one that follows its LISTEN; no other
	// comes within a round (20 s; the test ends in about 15) unless a
	// notice wakes it.
	eventually(t, 5*time.Second, "the other node's first two rounds", func() bool { return otherRounds() >= 2 })
	before := otherRounds()
	require.Equal(t, 2.0, before)

	// A node takes nothing in its first round period (State.Starting,
	// docs/design.md §3.3): let it pass, so that what follows measures
	// rounds on notice, not the wait of a starting node.
	time.Sleep(ttl / 3)

	balanced := func(tables ...int64) func() bool {
		return func() bool {
			rows := leaseRows(t, pool)
			parts, writers := heldBy(rows)
			want := 0
			for range tables {
				want += 2
			}
			return parts["a"] == want && parts["b"] == want && len(writers) == len(tables) && jobsMatch(rows, a, b)
		}
	}

	// A table created: 4 partitions, 2 per node, and the writer.
	start := time.Now()
	id := createTable(t, pool, "created", 4)
	eventually(t, prompt, "the new table's leases are held, 2 and 2, and their jobs run", balanced(id))
	t.Logf("new table: leases held and jobs running %s after the commit", time.Since(start).Round(time.Millisecond))

	// A table dropped: its jobs stop and nothing is held.
	start = time.Now()
	_, err := pool.Exec(context.Background(), `DELETE FROM tables WHERE id = $1`, id)
	require.NoError(t, err)
	eventually(t, prompt, "the dropped table's jobs stop", func() bool {
		return len(a.c.Held()) == 0 && len(b.c.Held()) == 0 && len(a.rec.snapshot()) == 0 && len(b.rec.snapshot()) == 0
	})
	t.Logf("dropped table: jobs stopped %s after the commit", time.Since(start).Round(time.Millisecond))

	// A clean stop: the other node takes every lease over.
	id = createTable(t, pool, "stopped", 4)
	eventually(t, prompt, "the second table is shared", balanced(id))
	start = time.Now()
	require.NoError(t, b.stop(t))
	eventually(t, prompt, "a holds every lease of the stopped node", func() bool {
		rows := leaseRows(t, pool)
		parts, writers := heldBy(rows)
		return parts["a"] == 4 && writers[fmt.Sprintf("%d/writer", id)] == "a" && jobsMatch(rows, a)
	})
	t.Logf("clean stop: leases taken over %s after Run returned", time.Since(start).Round(time.Millisecond))

	require.Equal(t, before, otherRounds(), "the other cluster's node ran no round on this cluster's notices")
	require.Empty(t, other.c.Held())
}
