package tail

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/commit"
	"github.com/minkhq/mink/kafka"
	"github.com/minkhq/mink/tables"
)

// TestWanted: what a load commits once it holds the row lock
// (docs/design.md §4.4 step 5).
func TestWanted(t *testing.T) {
	offs := map[int32]kafka.Offsets{0: {LogStart: 0, LastStable: 100}, 1: {LogStart: 50, LastStable: 80}, 2: {LastStable: 10}}
	base := map[int32]int64{0: 40, 1: 20, 2: 10}
	tail := []tailRange{{0, 40, 100}, {1, 50, 80}}
	require.Equal(t, tail, tailOf(base, offs), "from the content end, never below the log start; nothing past the last stable offset")

	got, err := wanted(base, map[int32]int64{0: 40, 1: 20, 2: 10}, offs, false)
	require.NoError(t, err)
	require.Equal(t, tail, got, "the head did not move")

	got, err = wanted(base, map[int32]int64{0: 40, 1: 20, 2: 12}, offs, false)
	require.NoError(t, err, "a partition the load does not extend moved")
	require.Equal(t, tail, got)

	moved := map[int32]int64{0: 70, 1: 20, 2: 10}
	_, err = wanted(base, moved, offs, false)
	require.ErrorIs(t, err, errOvertaken)
	got, err = wanted(base, moved, offs, true)
	require.NoError(t, err)
	require.Equal(t, []tailRange{{0, 70, 100}, {1, 50, 80}}, got, "under the lock: planned again from the head found")
}

// TestGather: every wanted range moves its content end; only ranges with a
// row of the table add a file.
func TestGather(t *testing.T) {
	tbl := &tables.Table{Namespace: "ns", Name: "t"}
	a, b := tailRange{0, 40, 100}, tailRange{1, 50, 80}
	f := &commit.TailFile{Key: "a"}
	add, ends, err := gather(tbl, []tailRange{a, b}, map[tailRange]*commit.TailFile{a: f}, map[tailRange]bool{a: true, b: true})
	require.NoError(t, err)
	require.Equal(t, []*commit.TailFile{f}, add)
	require.Equal(t, map[int32]int64{0: 100, 1: 80}, ends)

	_, _, err = gather(tbl, []tailRange{a, b}, map[tailRange]*commit.TailFile{a: f}, map[tailRange]bool{a: true})
	require.ErrorContains(t, err, "was not built")
}
