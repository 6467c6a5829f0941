package writer

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestGates: after its first round a writer runs a duty only when what it
// depends on changed: a commit when the look saw work after the last
// commit; expiry when Kafka's log start offsets moved (records deleted)
// even though no snapshot changed; collection once more collectAfter
// after the last change; everything again when the look is stale.
func TestGates(t *testing.T) {
	s := schedule{expiryInterval: 10 * time.Second, checkInterval: 30 * time.Second, statsInterval: 30 * time.Second,
		commitInterval: 2 * time.Second, collectAfter: 10 * time.Minute}
	t0 := time.Unix(1_000_000, 0)
	st := &tableState{at: t0, heads: "m1 d1", snapshots: "1 2", logStarts: map[int32]int64{0: 0}, partitions: 1, kafka: 1}
	g := s.gates(t0, nil)
	require.True(t, g.commit, "first round: everything")
	require.Equal(t, [duties]bool{true, true, true, true, true, true}, g.open)
	s.lastStats, s.lastExpiry, s.lastAssembly, s.lastCheck = t0, t0, t0, t0
	for d := range duties {
		s.done(d, gates{now: t0, heads: st.heads, snapshots: st.snapshots, logStarts: st.logStarts}, true)
	}

	// Nothing changed, every interval passed: nothing runs.
	now := t0.Add(time.Minute)
	st.at = now
	s.lastCommit = t0
	g = s.gates(now, st)
	require.True(t, g.none(), "%+v", g)

	// Work after the last commit: the commit runs, once.
	st.pending = true
	require.True(t, s.gates(now, st).commit)
	require.False(t, s.gates(now.Add(time.Second), st).commit, "the look predates the commit")

	// Records deleted below the log start: expiry and assembly.
	st.pending = false
	st.at = now.Add(2 * time.Second)
	st.logStarts = map[int32]int64{0: 5}
	g = s.gates(now.Add(2*time.Second), st)
	require.Equal(t, [duties]bool{dutyExpiry: true, dutyAssembly: true}, g.open)
	s.done(dutyExpiry, g, true)
	s.done(dutyAssembly, g, false)
	g = s.gates(now.Add(3*time.Second), st)
	require.Equal(t, [duties]bool{dutyAssembly: true}, g.open, "a failed duty stays open")
	s.done(dutyAssembly, g, true)

	// A statistics file changes the metadata location, not the snapshot:
	// collection only, and once more collectAfter later.
	st.heads = "m2 d1"
	g = s.gates(now.Add(4*time.Second), st)
	require.Equal(t, [duties]bool{dutyCollect: true}, g.open)
	s.done(dutyCollect, g, true)
	require.True(t, s.gates(now.Add(5*time.Second), st).none())
	later := st.at.Add(10*time.Minute + time.Second)
	st.at = later
	require.Equal(t, [duties]bool{dutyCollect: true}, s.gates(later, st).open)

	// The topic gained a partition: the partition check.
	st.kafka = 2
	require.True(t, s.gates(later, st).allows(dutyCheck))

	// A stale look: everything that is due, the commit too.
	g = s.gates(later.Add(time.Minute), st)
	require.True(t, g.commit)
	require.True(t, g.allows(dutyStats))
}
