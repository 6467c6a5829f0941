package e2e

// Issue #9 §7: how long things take that should take a round trip, not a
// round. The nodes run with lease_ttl 30 s, so a round comes every 10 s;
// every bound here is well below that.

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/internal/clustertest"
	"github.com/minkhq/mink/internal/testkit"
)

// TestPromptRoundsAndStop: a table created is taken up and indexed by
// every node at once; a node stopped with SIGTERM exits promptly, its row
// and leases gone when it exits, and the other node takes its leases over
// at once; a table dropped is let go at once. The database notifies the
// nodes (cluster/doc.go, "When rounds run").
func TestPromptRoundsAndStop(t *testing.T) {
	const (
		ttl    = 30 * time.Second
		prompt = 5 * time.Second // half a round; typically tens of ms
		// exitBound is generous for a loaded two-core machine; a stop
		// that waits on a client's connection takes 5 s or more.
		exitBound = 3 * time.Second
	)
	env := clustertest.New(t)
	opts := clustertest.NodeOptions{LeaseTTL: ttl}
	a, b := env.StartNode(opts), env.StartNode(opts)
	// After both registered: a node's Starting round counts from its own
	// start, and b's began up to a second after a's.
	started := time.Now()
	env.CreateTopic("events", 4)
	prod := env.StartProducer("events", 4, rate)
	prod.WaitMore(t, rate/4, 10*time.Second)
	// A node takes nothing in its first lease_ttl/3 (Starting, design
	// §3.3); what is prompt is a round on notice after that.
	time.Sleep(time.Until(started.Add(ttl/3 + time.Second)))

	// A new table: held 2 and 2, and indexed, within half a round.
	created := time.Now()
	env.CreateTable(a.URL(), map[string]any{"namespace": "test", "name": "events", "topic": "events", "value_format": "raw"})
	id := env.TableID(t, "test.events")
	ls := env.WaitBalanced(t, id, prompt, map[string]int{a.ID: 2, b.ID: 2})
	held := time.Since(created)
	testkit.Eventually(t, prompt-held, 20*time.Millisecond, "every partition indexed", func() (bool, string) {
		rs := env.Ranges(t, id)
		return len(rs) == 4, ""
	})
	t.Logf("new table: leases held %s and every partition indexed %s after the create", held.Round(time.Millisecond),
		time.Since(created).Round(time.Millisecond))

	// A clean stop of the writer's holder while clients hold connections
	// to it: idle ones a scan left, and one on which no request came.
	victim := env.Node(ls.Writer())
	survivor := others(env, victim)[0]
	clustertest.ScanAll(t, victim.URL(), "test.events")
	conn, err := net.Dial("tcp", strings.TrimPrefix(victim.URL(), "http://"))
	require.NoError(t, err)
	defer conn.Close()
	old := ls.HeldBy(victim.ID)
	require.NotEmpty(t, old)
	sent := time.Now()
	victim.Stop()
	exit := victim.ExitedAt().Sub(sent)
	rows := env.NodeRows(t)
	_, ok := rows[victim.ID]
	require.False(t, ok, "the node row is gone when the process has exited")
	require.Empty(t, env.Leases(t, id).HeldBy(victim.ID), "every lease is released when the process has exited")
	require.Less(t, exit, exitBound, "exit after SIGTERM")
	env.WaitLeases(t, id, prompt, "the survivor holds every lease", func(ls clustertest.Leases) bool {
		return ls.AllHeld() && len(ls.HeldBy(survivor.ID)) == len(ls.Leases)
	})
	t.Logf("clean stop: exit %s after SIGTERM (%s); leases taken over %s after the exit",
		exit.Round(time.Millisecond), strings.Join(victim.LogLines("node: stopped"), ""),
		time.Since(victim.ExitedAt()).Round(time.Millisecond))
	finish(t, env, id, prod, survivor)

	// A dropped table: the survivor lets its leases go within half a round.
	dropped := time.Now()
	req, err := http.NewRequest(http.MethodDelete, survivor.URL()+"/admin/v1/tables/test.events", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
	testkit.Eventually(t, prompt, 20*time.Millisecond, "the survivor holds no lease", func() (bool, string) {
		held, err := clustertest.AdminHeld(context.Background(), survivor.URL(), survivor.ID)
		if err != nil {
			return false, err.Error()
		}
		return len(held) == 0, fmt.Sprint(held)
	})
	t.Logf("dropped table: leases let go %s after the delete", time.Since(dropped).Round(time.Millisecond))
}
