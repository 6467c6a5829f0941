package icebergmeta_test

import (
	"testing"
	"time"

	"github.com/apache/iceberg-go"
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
