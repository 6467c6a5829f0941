package icebergmeta_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/icebergmeta"
)

// TestCommitExpiresSnapshots: a commit removes the snapshots older than
// history.expire.max-snapshot-age-ms (at the commit's time), except the
// newest history.expire.min-snapshots-to-keep of main, the new one
// included; it reports them in Expired; iceberg-go reads the result and
// still plans every live file.
func TestCommitExpiresSnapshots(t *testing.T) {
	t0, now := clock()
	s := newStore()
	metaLoc, meta := s.newTable(t, iceberg.Properties{
		icebergmeta.PropMaxSnapshotAge: "60000", icebergmeta.PropMinSnapshotsToKeep: "2"})
	res := &icebergmeta.CommitResult{MetadataLocation: metaLoc, Metadata: meta}
	var files []icebergmeta.AddedFile
	var expired [][]int64
	commit := func(id int64, at time.Duration) {
		f := rangeFile(0, id*10, id*10+10, t0, 0.1, 5)
		files = append(files, f)
		res = s.commit(t, res.MetadataLocation, res.Metadata, id, now.Add(at), f)
		expired = append(expired, res.Expired)
	}
	commit(1, 0)
	commit(2, 30*time.Second)
	commit(3, 60*time.Second) // 1 is exactly 60 s old: kept
	commit(4, 100*time.Second)
	require.Equal(t, [][]int64{nil, nil, nil, {1, 2}}, expired)
	tbl := loadTable(t, s, res.MetadataLocation)
	var ids []int64
	for _, sn := range tbl.Metadata().Snapshots() {
		ids = append(ids, sn.SnapshotID)
	}
	require.Equal(t, []int64{3, 4}, ids)
	for e := range tbl.Metadata().SnapshotLogs() {
		require.Contains(t, ids, e.SnapshotID, "the snapshot log names only retained snapshots")
	}
	require.Equal(t, paths(files...), plannedPaths(t, tbl))
	require.Equal(t, "4", tbl.Metadata().CurrentSnapshot().Summary.Properties["total-data-files"])

	// An hour later, min-snapshots-to-keep 2 keeps the new one and its parent.
	commit(5, time.Hour)
	require.Equal(t, []int64{3}, res.Expired)
	// A rewrite expires too.
	r := s.rewrite(t, res, 6, now.Add(2*time.Hour), []string{files[0].Path})
	require.Equal(t, []int64{4}, r.Expired)
	require.Equal(t, paths(files[1:]...), plannedPaths(t, loadTable(t, s, r.MetadataLocation)))
}

// TestCommitBoundsSnapshotCount: mink.history.max-snapshots keeps at most
// that many of the newest snapshots whatever their age; what expires is the
// oldest part of the history, so every retained snapshot's parent chain is
// unbroken down to the oldest retained one.
func TestCommitBoundsSnapshotCount(t *testing.T) {
	t0, now := clock()
	s := newStore()
	metaLoc, meta := s.newTable(t, iceberg.Properties{
		icebergmeta.PropMaxSnapshots: "5"})
	res := &icebergmeta.CommitResult{MetadataLocation: metaLoc, Metadata: meta}
	var expired []int64
	for id := int64(1); id <= 12; id++ {
		f := rangeFile(int32(id%3), id*10, id*10+10, t0, 0.1, 5)
		res = s.commit(t, res.MetadataLocation, res.Metadata, id, now.Add(time.Duration(id)*time.Millisecond), f)
		expired = append(expired, res.Expired...)
	}
	require.Equal(t, []int64{1, 2, 3, 4, 5, 6, 7}, expired)
	md := loadTable(t, s, res.MetadataLocation).Metadata()
	var ids []int64
	for _, sn := range md.Snapshots() {
		ids = append(ids, sn.SnapshotID)
	}
	require.Equal(t, []int64{8, 9, 10, 11, 12}, ids)
	for sn := md.CurrentSnapshot(); sn.SnapshotID != 8; sn = md.SnapshotByID(*sn.ParentSnapshotID) {
		require.NotNil(t, md.SnapshotByID(*sn.ParentSnapshotID), "parent of %d", sn.SnapshotID)
	}
}

func TestParseThinning(t *testing.T) {
	th, err := icebergmeta.ParseThinning(icebergmeta.DefaultThinning)
	require.NoError(t, err)
	require.Equal(t, icebergmeta.Thinning{{Age: time.Minute, Step: 2 * time.Second}, {Age: 10 * time.Minute, Step: 10 * time.Second},
		{Age: time.Hour, Step: time.Minute}, {Age: 24 * time.Hour, Step: time.Hour}}, th)
	th, err = icebergmeta.ParseThinning(" 90s:500ms , 7d:1h30m")
	require.NoError(t, err)
	require.Equal(t, icebergmeta.Thinning{{Age: 90 * time.Second, Step: 500 * time.Millisecond}, {Age: 7 * 24 * time.Hour, Step: 90 * time.Minute}}, th)
	th, err = icebergmeta.ParseThinning("")
	require.NoError(t, err)
	require.Empty(t, th)
	for in, msg := range map[string]string{
		"1m":            `"1m" is not AGE:STEP`,
		"1m:2s,":        `"" is not AGE:STEP`,
		"x:2s":          `age "x" is not a duration`,
		"-1m:2s":        `age "-1m" is not a duration`,
		"1m:0s":         `step "0s" is not a positive`,
		"1m:1500us":     `step "1500us" is not a positive whole number of milliseconds`,
		"1m:2s,1m:4s":   "ages must increase",
		"1m:2s,10m:5s":  "step 5s is not a multiple of the previous step 2s",
		"1m:2s,1.5d:1h": `age "1.5d" is not a duration`,
	} {
		_, err := icebergmeta.ParseThinning(in)
		require.ErrorIs(t, err, icebergmeta.ErrInvalidThinning, in)
		require.ErrorContains(t, err, msg, in)
	}
}

// TestCommitThinsHistory: commits thin the history by
// mink.history.thinning, and the snapshot-log keeps an entry for every
// retained snapshot (iceberg-go's builder alone would drop the entries
// before an expired one), so `FOR TIMESTAMP AS OF` (iceberg-go's
// SnapshotAsOf) finds the retained snapshot nearest before any T. A tag
// (a ref other than main) keeps its snapshot, and ExpireSnapshots expires
// the snapshots it is given except the current one and the tagged one.
func TestCommitThinsHistory(t *testing.T) {
	t0, _ := clock()
	// Thinning windows are epoch-aligned: so is now. A commit every 10 ms
	// (the metadata-only expiry is stamped with the wall clock, which
	// iceberg-go wants within a minute of the last snapshot).
	now := time.Now().Truncate(100 * time.Millisecond).Add(time.Second)
	const tick = 10 * time.Millisecond
	s := newStore()
	metaLoc, meta := s.newTable(t, iceberg.Properties{icebergmeta.PropThinning: "50ms:20ms,200ms:100ms"})
	res := &icebergmeta.CommitResult{MetadataLocation: metaLoc, Metadata: meta}
	times := map[int64]int64{}
	for id := int64(1); id <= 60; id++ {
		res = s.commit(t, res.MetadataLocation, res.Metadata, id, now.Add(time.Duration(id)*tick),
			rangeFile(0, id*10, id*10+10, t0, 0.1, 5))
		times[id] = now.Add(time.Duration(id) * tick).UnixMilli()
		if id == 3 {
			// Tag snapshot 3, as consumer-group tags do.
			md, err := table.ParseMetadataBytes(res.Metadata)
			require.NoError(t, err)
			b, err := table.MetadataBuilderFromBase(md, res.MetadataLocation)
			require.NoError(t, err)
			require.NoError(t, b.SetSnapshotRef("group.billing", 3, table.TagRef))
			md, err = b.Build()
			require.NoError(t, err)
			res.Metadata, err = json.Marshal(md)
			require.NoError(t, err)
		}
	}
	tbl := loadTable(t, s, res.MetadataLocation)
	md := tbl.Metadata()
	var ids []int64
	for _, sn := range md.Snapshots() {
		ids = append(ids, sn.SnapshotID)
		require.Equal(t, times[sn.SnapshotID], sn.TimestampMs)
	}
	var logged []int64
	for e := range md.SnapshotLogs() {
		logged = append(logged, e.SnapshotID)
	}
	// Now = 60 ticks: 3 is tagged; older than 20 ticks (ids up to 40): one
	// per window of 10 (the newest: 9, 19, 29, 39); 5 to 20 ticks (40 to
	// 55): one per 2; younger: all.
	want := []int64{3, 9, 19, 29, 39, 41, 43, 45, 47, 49, 51, 53, 55, 56, 57, 58, 59, 60}
	require.Equal(t, want, ids)
	require.Equal(t, want, logged)
	require.Equal(t, int64(3), md.SnapshotByName("group.billing").SnapshotID)
	for T, picked := range map[int64]int64{25: 19, 40: 39, 44: 43, 52: 51, 59: 59} {
		require.Equal(t, picked, tbl.SnapshotAsOf(now.Add(time.Duration(T)*tick).UnixMilli(), true).SnapshotID, "T %d", T)
	}

	upd, err := icebergmeta.ExpireSnapshots(icebergmeta.ExpireInput{Metadata: res.Metadata, MetadataLocation: res.MetadataLocation,
		Expire: []int64{3, 9, 19, 60}, Now: now.Add(60 * tick)})
	require.NoError(t, err)
	require.Equal(t, []int64{9, 19}, upd.Expired)
	var left, leftLog []int64
	for _, sn := range upd.Parsed.Snapshots() {
		left = append(left, sn.SnapshotID)
	}
	for e := range upd.Parsed.SnapshotLogs() {
		leftLog = append(leftLog, e.SnapshotID)
	}
	require.Equal(t, append([]int64{3}, want[3:]...), left)
	require.Equal(t, left, leftLog)
	require.Equal(t, int64(60), upd.Parsed.CurrentSnapshot().SnapshotID)
	require.Contains(t, string(upd.Metadata), `"group.billing"`)
	// Nothing to expire: no new metadata.
	upd, err = icebergmeta.ExpireSnapshots(icebergmeta.ExpireInput{Metadata: res.Metadata, MetadataLocation: res.MetadataLocation,
		Now: now.Add(60 * tick)})
	require.NoError(t, err)
	require.Nil(t, upd)
}

// TestCommitTimestampsIncrease: two commits in the same millisecond get
// distinct, increasing timestamps.
func TestCommitTimestampsIncrease(t *testing.T) {
	t0, now := clock()
	s := newStore()
	metaLoc, meta := s.newTable(t, nil)
	r1 := s.commit(t, metaLoc, meta, 1, now, rangeFile(0, 0, 10, t0, 1, 2))
	r2 := s.commit(t, r1.MetadataLocation, r1.Metadata, 2, now, rangeFile(0, 10, 20, t0, 1, 2))
	md, err := table.ParseMetadataBytes(r2.Metadata)
	require.NoError(t, err)
	require.Equal(t, now.UnixMilli()+1, md.SnapshotByID(2).TimestampMs)
}
