package writer

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/commit"
	"github.com/minkhq/mink/kafka"
)

// TestCutOf: a group's cut is its committed offset, at most the last
// stable offset and at least the partition's start; a partition it has
// not committed on is cut at its start.
func TestCutOf(t *testing.T) {
	starts := map[int32]int64{0: 0, 1: 0, 2: 10, 3: 0}
	offs := map[int32]kafka.Offsets{0: {LastStable: 100}, 1: {LastStable: 100}, 2: {LastStable: 100}, 3: {LastStable: 50}}
	cut, err := cutOf(map[int32]int64{0: 40, 2: 5, 3: 75}, starts, offs)
	require.NoError(t, err)
	require.Equal(t, map[int32]int64{0: 40, 1: 0, 2: 10, 3: 50}, cut)
	require.Equal(t, "0:40,1:0,2:10,3:50", formatCut(cut))
	_, err = cutOf(map[int32]int64{0: 1}, starts, map[int32]kafka.Offsets{})
	require.Error(t, err)
}

// TestPlanTag: a tag lists the current snapshot's files that end at or
// below its cut and a gap per partition from the last of them to the cut
// (from the start, not below the log start, when none ends below it).
func TestPlanTag(t *testing.T) {
	f := func(p int32, s, e int64) liveFile {
		return liveFile{TagFile: commit.TagFile{Key: "k", Partition: p, Start: s, End: e}}
	}
	live := []liveFile{f(0, 0, 10), f(0, 10, 20), f(0, 20, 30), f(1, 0, 10), f(2, 30, 40), f(3, 0, 5), f(3, 8, 12)}
	cut := map[int32]int64{0: 25, 1: 10, 2: 35, 3: 20, 4: 0}
	keep, gaps := planTag(live, cut, map[int32]int64{0: 0, 1: 0, 2: 0, 3: 0, 4: 0}, map[int32]int64{2: 30})
	require.Equal(t, []liveFile{f(0, 0, 10), f(0, 10, 20), f(1, 0, 10), f(3, 0, 5), f(3, 8, 12)}, keep)
	require.Equal(t, []tagGap{{0, 20, 25}, {2, 30, 35}, {3, 12, 20}}, gaps)
}
