package writer

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/commit"
	"github.com/minkhq/mink/datafile"
)

// file is a committed live data file of this encoder version for the
// assembly tests.
func asmFile(dlq bool, p int32, start, end, size int64, schema int) assemblyFile {
	return assemblyFile{dlq: dlq, key: "k", partition: p, start: start, end: end, size: size, records: end - start,
		schema: schema, encoder: datafile.EncoderVersion, committed: true}
}

// okSpans are contiguous spans of one partition with sizes.
func okSpans(sizes ...int64) []span {
	var out []span
	var off int64
	for _, s := range sizes {
		out = append(out, span{partition: 0, start: off, end: off + 10, size: s, ok: true})
		off += 10
	}
	return out
}

// ranges returns each group's joint range.
func ranges(groups [][]span) [][2]int64 {
	var out [][2]int64
	for _, g := range groups {
		out = append(out, [2]int64{g[0].start, g[len(g)-1].end})
	}
	return out
}

// TestPlanAssembly: the grouping rule of docs/design.md §4.6 ("assembly").
func TestPlanAssembly(t *testing.T) {
	t.Run("small files become one", func(t *testing.T) {
		require.Equal(t, [][2]int64{{0, 50}}, ranges(planAssembly(okSpans(1, 1, 1, 1, 1), 100)))
	})
	t.Run("a group closes once it reaches the target", func(t *testing.T) {
		require.Equal(t, [][2]int64{{0, 30}, {30, 60}}, ranges(planAssembly(okSpans(40, 40, 40, 40, 40, 40, 40), 100)),
			"the last file stays alone")
	})
	t.Run("big files alone are left alone", func(t *testing.T) {
		require.Empty(t, planAssembly(okSpans(100, 200, 150), 100))
		require.Equal(t, [][2]int64{{10, 30}}, ranges(planAssembly(okSpans(100, 5, 100, 100), 100)),
			"a small file before a big one joins it")
	})
	t.Run("breaks: partition, gap, schema version, not ok", func(t *testing.T) {
		ss := okSpans(1, 1, 1, 1, 1, 1, 1, 1)
		ss[2].schema = 1 // [20, 30) has another version
		ss[4].ok = false
		ss[6].start, ss[6].end = ss[6].start+1, ss[6].end+1 // a gap before [61, 71)
		ss[7].start, ss[7].end = ss[6].end, ss[6].end+10
		require.Equal(t, [][2]int64{{0, 20}, {61, 81}}, ranges(planAssembly(ss, 100)))
		ss = append(okSpans(1, 1), okSpans(1, 1)...)
		ss[2].partition, ss[3].partition = 1, 1
		ss[2].start, ss[2].end, ss[3].start, ss[3].end = 0, 10, 10, 20
		require.Len(t, planAssembly(ss, 100), 2, "one group per partition")
	})
}

// TestPlanAssemblyBound is the property of docs/design.md §4.6: after
// assembly a partition whose spans may all be assembled holds at most
// ceil(bytes/target) + 2 files; groups are runs of two or more adjacent
// spans, each span in at most one, and every group but the partition's
// last reaches the target.
func TestPlanAssemblyBound(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 5000; i++ {
		target := 1 + r.Int64N(1000)
		n := r.IntN(60)
		sizes := make([]int64, n)
		var total int64
		for j := range sizes {
			switch r.IntN(4) {
			case 0:
				sizes[j] = 1 + r.Int64N(3*target) // any size, also above the target
			default:
				sizes[j] = 1 + r.Int64N(target/4+1) // small
			}
			total += sizes[j]
		}
		ss := okSpans(sizes...)
		groups := planAssembly(ss, target)
		files := n
		next := int64(0)
		for gi, g := range groups {
			require.GreaterOrEqual(t, len(g), 2)
			var sum int64
			for k, s := range g {
				if k > 0 {
					require.Equal(t, g[k-1].end, s.start, "adjacent")
				}
				require.GreaterOrEqual(t, s.start, next, "each span in one group at most")
				sum += s.size
			}
			next = g[len(g)-1].end
			if gi < len(groups)-1 {
				require.GreaterOrEqual(t, sum, target, "a closed group reaches the target")
			}
			files -= len(g) - 1
		}
		bound := int((total+target-1)/target) + 2
		require.LessOrEqual(t, files, bound, "sizes %v target %d groups %v", sizes, target, ranges(groups))
	}
}

// TestSpans: files of the table and of its dead-letter table pair into
// spans by range; what may be assembled.
func TestSpans(t *testing.T) {
	lim := assemblyLimits{logStart: map[int32]int64{0: 10}, tableEnds: map[int32]int64{0: 100}, dlqEnds: map[int32]int64{0: 90}}
	files := []assemblyFile{
		asmFile(false, 0, 0, 20, 5, 0),  // below the log start
		asmFile(false, 0, 20, 30, 5, 0), // with its dead letters
		asmFile(true, 0, 20, 30, 1, 0),
		asmFile(true, 0, 30, 40, 1, 0),   // only dead letters
		asmFile(false, 0, 40, 50, 5, 1),  // another schema version
		asmFile(false, 0, 50, 60, 5, 0),  // marked for re-indexing
		asmFile(false, 0, 60, 70, 5, 0),  // uncommitted
		asmFile(false, 0, 70, 80, 5, 0),  // under a tail file
		asmFile(false, 0, 80, 95, 5, 0),  // past the dead-letter table's content end
		asmFile(false, 0, 95, 100, 5, 0), // with a misaligned dead-letter file
		asmFile(true, 0, 96, 100, 1, 0),
	}
	files[5].needsRebuild = true
	files[6].committed = false
	lim.tails = []*commit.TailFile{{Partition: 0, Start: 75, End: 78}}
	lim.dlqEnds[0] = 90
	ss := spans(files, lim)
	var got []bool
	for _, s := range ss {
		got = append(got, s.ok)
	}
	require.Equal(t, []bool{false, true, true, true, false, false, false, false, false, false}, got)
	require.EqualValues(t, 6, ss[1].size, "both tables' bytes")
	require.NotNil(t, ss[1].table)
	require.NotNil(t, ss[1].dlq)
	require.Nil(t, ss[2].table)

	// A file that covers several of the other table's files: none of them
	// is assembled.
	ss = spans([]assemblyFile{asmFile(false, 0, 10, 40, 5, 0), asmFile(true, 0, 20, 30, 1, 0),
		asmFile(true, 0, 30, 40, 1, 0), asmFile(false, 0, 40, 50, 1, 0)}, lim)
	got = nil
	for _, s := range ss {
		got = append(got, s.ok)
	}
	require.Equal(t, []bool{false, false, false, true}, got)
}

// TestAssemblyPassesServeEveryPartition: passes with the budget (passPlan)
// over a slow topic of 6 partitions, each gaining small files between
// passes, whose open groups together need more than one pass's budget:
// every partition is assembled at least every few passes, and right after
// its pass holds at most ceil(bytes/target) + 2 files. In offset order the
// first partitions' open groups took the whole budget each pass and a
// later partition was never assembled (a trial found 1,150 files in
// partition 5 of 6).
func TestAssemblyPassesServeEveryPartition(t *testing.T) {
	const partitions, target = 6, 1000
	parts := make([][]span, partitions)
	waited := make([]int, partitions) // passes since the partition's last assembly
	maxWait := 0
	var from int32
	defer func() { t.Logf("max wait %d", maxWait) }()
	grow := func() {
		for p := range parts {
			var off int64
			if n := len(parts[p]); n > 0 {
				off = parts[p][n-1].end
			}
			parts[p] = append(parts[p], span{partition: int32(p), start: off, end: off + 10, size: 60 + int64(p), ok: true})
		}
	}
	for pass := 0; pass < 400; pass++ {
		for range 5 { // several flushes land between two passes
			grow()
		}
		var ss []span
		for _, p := range parts {
			ss = append(ss, p...)
		}
		planned, done := map[int32]int{}, map[int32]int{}
		for _, g := range planAssembly(ss, target) {
			planned[g[0].partition]++
		}
		groups, next := passPlan(ss, target, from)
		from = next
		for _, g := range groups {
			p := g[0].partition
			done[p]++
			merged := span{partition: p, start: g[0].start, end: g[len(g)-1].end, ok: true}
			for _, s := range g {
				merged.size += s.size
			}
			var next []span
			for _, s := range parts[p] {
				switch {
				case s.start == merged.start:
					next = append(next, merged)
				case s.start > merged.start && s.end <= merged.end:
				default:
					next = append(next, s)
				}
			}
			parts[p] = next
		}
		for p, files := range parts {
			if done[int32(p)] < planned[int32(p)] { // not (wholly) assembled this pass
				waited[p]++
				require.LessOrEqual(t, waited[p], 2, "pass %d: partition %d not assembled for %d passes (%d files)", pass, p, waited[p], len(files))
				continue
			}
			if waited[p] > maxWait {
				maxWait = waited[p]
			}
			waited[p] = 0
			var bytes int64
			for _, s := range files {
				bytes += s.size
			}
			require.LessOrEqual(t, len(files), int((bytes+target-1)/target)+2, "pass %d partition %d: %d bytes", pass, p, bytes)
		}
	}
}
