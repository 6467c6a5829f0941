package writer

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/commit"
	"github.com/minkhq/mink/datafile"
)

// TestPlanPartition: how one round turns tail files into indexed data
// files without adding or dropping a row (docs/design.md §4.6).
func TestPlanPartition(t *testing.T) {
	key := func(s, e int64, v int) string { return fmt.Sprintf("ns/t/data/0/%d-%d-%d.parquet", s, e, v) }
	idx := func(s, e int64) indexedFile {
		return indexedFile{key: key(s, e, 2), start: s, end: e, stats: datafile.Stats{RecordCount: e - s}}
	}
	tl := func(s, e int64) *commit.TailFile {
		return &commit.TailFile{Key: key(s, e, 2), Start: s, End: e, Records: e - s}
	}
	oldTail := func(s, e int64) *commit.TailFile {
		return &commit.TailFile{Key: key(s, e, 1), Start: s, End: e, Records: e - s}
	}
	type want struct {
		appendFiles, replaceFiles, removeTails, adopt [][2]int64
		bridge, remainder                             *[2]int64
		end                                           int64
	}
	spans := func(fs []indexedFile) (out [][2]int64) {
		for _, f := range fs {
			out = append(out, [2]int64{f.start, f.end})
		}
		return out
	}
	tspans := func(fs []*commit.TailFile) (out [][2]int64) {
		for _, f := range fs {
			out = append(out, [2]int64{f.Start, f.End})
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		e, tgt int64
		files  []indexedFile
		tails  []*commit.TailFile
		want   want
	}{
		{name: "no loads: every indexed file is appended", e: 100, tgt: 300,
			files: []indexedFile{idx(100, 200), idx(200, 300)},
			want:  want{appendFiles: [][2]int64{{100, 200}, {200, 300}}, end: 300}},
		{name: "loads ahead: tail files up to the indexed end are replaced, the rest is a remainder", e: 400, tgt: 300,
			files: []indexedFile{idx(100, 180), idx(180, 300)},
			tails: []*commit.TailFile{tl(100, 250), tl(250, 350), tl(350, 400)},
			want: want{replaceFiles: [][2]int64{{100, 180}, {180, 300}}, removeTails: [][2]int64{{100, 250}, {250, 350}},
				remainder: &[2]int64{300, 350}, end: 400}},
		{name: "tail boundaries that meet an indexed end need no remainder", e: 400, tgt: 300,
			files: []indexedFile{idx(100, 300)},
			tails: []*commit.TailFile{tl(100, 250), tl(250, 300), tl(300, 400)},
			want:  want{replaceFiles: [][2]int64{{100, 300}}, removeTails: [][2]int64{{100, 250}, {250, 300}}, end: 400}},
		{name: "indexing ahead: the file across the content end is bridged", e: 250, tgt: 400,
			files: []indexedFile{idx(100, 200), idx(200, 300), idx(300, 400)},
			tails: []*commit.TailFile{tl(100, 250)},
			want: want{appendFiles: [][2]int64{{300, 400}}, bridge: &[2]int64{250, 300},
				replaceFiles: [][2]int64{{100, 200}, {200, 300}}, removeTails: [][2]int64{{100, 250}}, end: 400}},
		{name: "a tail file of exactly an indexed range is adopted", e: 300, tgt: 300,
			files: []indexedFile{idx(100, 200), idx(200, 300)},
			tails: []*commit.TailFile{tl(100, 200), tl(200, 300)},
			want:  want{adopt: [][2]int64{{100, 200}, {200, 300}}, end: 300}},
		{name: "a tail file of another encoder version is replaced, not adopted", e: 300, tgt: 300,
			files: []indexedFile{idx(100, 200), idx(200, 300)},
			tails: []*commit.TailFile{oldTail(100, 200), tl(200, 300)},
			want: want{replaceFiles: [][2]int64{{100, 200}}, removeTails: [][2]int64{{100, 200}},
				adopt: [][2]int64{{200, 300}}, end: 300}},
		{name: "indexed files below the content end that no tail covers are new rows", e: 500, tgt: 300,
			files: []indexedFile{idx(100, 300)},
			want:  want{appendFiles: [][2]int64{{100, 300}}, end: 500}},
		{name: "ranges without a row move the end", e: 100, tgt: 250, want: want{end: 250}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pp := planPartition(tc.e, tc.tgt, tc.files, tc.tails)
			require.Equal(t, tc.want.appendFiles, spans(pp.appendFiles), "append")
			require.Equal(t, tc.want.replaceFiles, spans(pp.replaceFiles), "replace")
			require.Equal(t, tc.want.removeTails, tspans(pp.removeTails), "remove")
			require.Equal(t, tc.want.adopt, tspans(pp.adopt), "adopt")
			require.Equal(t, tc.want.bridge, pp.bridge, "bridge")
			require.Equal(t, tc.want.remainder, pp.remainder, "remainder")
			require.Equal(t, tc.want.end, pp.end, "end")
			// Rows: what a replace removes equals what it adds.
			if len(pp.removeTails) > 0 {
				var removed, added int64
				for _, f := range pp.removeTails {
					removed += f.Records
				}
				if pp.bridge != nil {
					removed += pp.bridge[1] - pp.bridge[0]
				}
				for _, f := range pp.replaceFiles {
					added += f.stats.RecordCount
				}
				if pp.remainder != nil {
					added += pp.remainder[1] - pp.remainder[0]
				}
				require.Equal(t, removed, added)
			}
		})
	}
}

// TestListedTargets: a round cut at the file limit commits its last
// partition only up to its last listed file, and no later partition.
func TestListedTargets(t *testing.T) {
	targets := map[int32]int64{0: 500, 1: 600, 2: 700}
	files := []indexedFile{{partition: 0, start: 0, end: 500}, {partition: 1, start: 0, end: 300}}
	require.Equal(t, targets, listedTargets(targets, files, 3), "not cut")
	require.Equal(t, map[int32]int64{0: 500, 1: 300}, listedTargets(targets, files, 2), "cut")
}

// TestGather: a round's commit gathered under the row lock; a partition
// it appends to that a table load extended meanwhile overtakes it.
func TestGather(t *testing.T) {
	base := &commit.Head{Ends: map[int32]int64{0: 100, 1: 250}}
	bridge := &commit.TailFile{Key: "b", Partition: 1, Start: 250, End: 300, Records: 50}
	remainder := &commit.TailFile{Key: "r", Partition: 0, Start: 300, End: 400, Records: 90}
	rp := &roundPlan{base: base, parts: map[int32]partPlan{
		0: {replaceFiles: []indexedFile{{key: "i0", start: 100, end: 300, stats: datafile.Stats{RecordCount: 200}}},
			removeTails: []*commit.TailFile{{Key: "t0", Start: 100, End: 400, Records: 300}},
			remainder:   &[2]int64{300, 400}, end: 400},
		1: {appendFiles: []indexedFile{{key: "i2", start: 300, end: 400}}, bridge: &[2]int64{250, 300},
			replaceFiles: []indexedFile{{key: "i1", start: 200, end: 300, stats: datafile.Stats{RecordCount: 100}}},
			removeTails:  []*commit.TailFile{{Key: "t1", Start: 200, End: 250, Records: 50}}, end: 400},
	}, built: map[[3]int64]*commit.TailFile{{1, 250, 300}: bridge, {0, 300, 400}: remainder}}

	rc, err := rp.gather(map[int32]int64{0: 100, 1: 250})
	require.NoError(t, err)
	require.Equal(t, []*commit.TailFile{bridge}, rc.bridges)
	require.Equal(t, []*commit.TailFile{remainder}, rc.remainders)
	require.Len(t, rc.removeTails, 3, "the tail files and the bridge")
	require.Equal(t, int64(300+50+50), rc.removedRecords)
	require.Equal(t, int64(200+90+100), rc.addedRecords, "the indexed files and the remainder")
	require.Equal(t, map[int32]int64{0: 400, 1: 400}, rc.ends)

	_, err = rp.gather(map[int32]int64{0: 400, 1: 250})
	require.NoError(t, err, "a load extended a partition the round only replaces in")
	_, err = rp.gather(map[int32]int64{0: 100, 1: 260})
	require.ErrorIs(t, err, errOvertaken, "a load extended a partition the round appends to")
}

// TestSchedule: expiry and the partition check run in a writer's first
// round, then once their interval has passed.
func TestSchedule(t *testing.T) {
	s := schedule{expiryInterval: 10 * time.Second, checkInterval: 30 * time.Second}
	t0 := time.Unix(1000, 0)
	require.True(t, s.expiryDue(t0))
	require.True(t, s.checkDue(t0))
	require.False(t, s.expiryDue(t0.Add(9*time.Second)))
	require.True(t, s.expiryDue(t0.Add(10*time.Second)))
	require.False(t, s.expiryDue(t0.Add(19*time.Second)), "counted from the last run")
	require.False(t, s.checkDue(t0.Add(29*time.Second)))
	require.True(t, s.checkDue(t0.Add(30*time.Second)))
}
