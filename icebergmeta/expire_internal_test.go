package icebergmeta

import (
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestThinning runs 26 hours of commits every 2 s through the expiry of the
// default properties, and checks what `FOR TIMESTAMP AS OF T` picks for
// random T (the newest retained snapshot at or before T, as engines pick
// from the snapshot-log): at most the step of T's age band (plus one
// commit interval) before T, every snapshot of the last minute, and a
// bounded count.
func TestThinning(t *testing.T) {
	const interval = 2000 // ms
	p := expiryPolicy{minKeep: 1, maxCount: DefaultMaxSnapshots}
	var err error
	p.thinning, err = ParseThinning(DefaultThinning)
	require.NoError(t, err)
	start := int64(1_780_000_000_000)
	var snaps []snapEntry
	expired := 0
	var now int64
	for i := int64(1); now < start+26*3600*1000; i++ {
		now = start + i*interval
		ids := p.expire(snaps, now, nil, nil)
		gone := make(map[int64]bool, len(ids))
		for _, id := range ids {
			gone[id] = true
		}
		kept := snaps[:0]
		for _, s := range snaps {
			if !gone[s.id] {
				kept = append(kept, s)
			}
		}
		snaps = append(kept, snapEntry{id: i, seq: i, ts: now})
		expired += len(ids)
	}
	t.Logf("%d snapshots kept, %d expired", len(snaps), expired)
	require.Less(t, len(snaps), 2100)
	require.Greater(t, len(snaps), 1900)
	// The last minute: every commit.
	n := 0
	for _, s := range snaps {
		if now-s.ts < 60_000 {
			n++
		}
	}
	require.Equal(t, 30, n)

	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		// Any T from the first hour of history to now.
		T := start + 3600*1000 + rng.Int64N(now-start-3600*1000)
		i := sort.Search(len(snaps), func(i int) bool { return snaps[i].ts > T }) - 1
		require.GreaterOrEqual(t, i, 0, "no snapshot at or before %d", T)
		step := max(p.thinning.step(time.Duration(now-T)*time.Millisecond).Milliseconds(), interval)
		require.LessOrEqual(t, T-snaps[i].ts, step+interval, "T %d ms old", now-T)
	}
}

// TestExpireProtects: the head, the minimum kept along its ancestry and
// the snapshots of refs other than main never expire, not even when below
// the log start; the count bound takes the oldest of the rest.
func TestExpireProtects(t *testing.T) {
	p := expiryPolicy{minKeep: 2, maxCount: 4} // the head counts, not in snaps
	snaps := []snapEntry{{1, 1, 10}, {2, 2, 20}, {3, 3, 30}, {4, 4, 40}, {5, 5, 50}}
	protected := map[int64]bool{2: true, 5: true}
	require.Equal(t, []int64{1, 3}, p.expire(snaps, 100, protected, nil))
	require.Equal(t, []int64{1, 4}, p.expire(snaps, 100, protected, map[int64]bool{2: true, 4: true}))
	p.maxAge = 65 * time.Millisecond // cutoff 35
	p.maxCount = 0
	require.Equal(t, []int64{1, 3}, p.expire(snaps, 100, protected, nil))
}
