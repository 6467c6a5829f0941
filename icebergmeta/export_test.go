package icebergmeta

import "time"

// SimulateHistory runs commits every interval for span from startMs through
// the expiry of thinning (and the default count bound), and returns the
// timestamps of the snapshots retained at the end, oldest first.
func SimulateHistory(thinning string, interval, span time.Duration, startMs int64) ([]int64, error) {
	th, err := ParseThinning(thinning)
	if err != nil {
		return nil, err
	}
	p := expiryPolicy{minKeep: 1, maxCount: DefaultMaxSnapshots, thinning: th}
	var snaps []snapEntry
	for i := int64(1); time.Duration(i)*interval <= span; i++ {
		now := startMs + i*interval.Milliseconds()
		gone := map[int64]bool{}
		for _, id := range p.expire(snaps, now, nil, nil) {
			gone[id] = true
		}
		kept := snaps[:0]
		for _, s := range snaps {
			if !gone[s.id] {
				kept = append(kept, s)
			}
		}
		snaps = append(kept, snapEntry{id: i, seq: i, ts: now})
	}
	out := make([]int64, len(snaps))
	for i, s := range snaps {
		out[i] = s.ts
	}
	return out, nil
}
