package icebergmeta_test

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/icebergmeta"
)

// TestSetTags: a tag names a new snapshot outside main (parent main's
// current, the next sequence number, main and the snapshot-log unchanged)
// that lists exactly its files, which iceberg-go plans when scanning the
// tag's snapshot; moving the tag removes the old snapshot, removing it
// removes its snapshot too, and the next append takes the sequence number
// after the tags'.
func TestSetTags(t *testing.T) {
	t0, now := clock()
	s := newStore()
	metaLoc, meta := s.newTable(t, nil)
	f1, f2, f3 := rangeFile(0, 0, 10, t0, 0.1, 5), rangeFile(0, 10, 20, t0, 0.1, 5), rangeFile(1, 0, 7, t0, 0.1, 5)
	res := s.commit(t, metaLoc, meta, 1, now, f1, f2, f3)
	logLen := len(slices.Collect(res.Parsed.SnapshotLogs()))

	set := func(loc string, md []byte, in icebergmeta.TagsInput) *icebergmeta.TagsResult {
		t.Helper()
		in.MetadataLocation, in.Metadata, in.Now = loc, md, now.Add(time.Second)
		r, err := icebergmeta.SetTags(in)
		require.NoError(t, err)
		for _, f := range r.Files {
			s.put(f.Location, f.Content)
		}
		s.put(r.MetadataLocation, r.Metadata)
		return r
	}
	tagged := func(r *icebergmeta.TagsResult, name string) []string {
		t.Helper()
		ref := r.Parsed.SnapshotByName(name)
		require.NotNil(t, ref, "ref %s", name)
		tasks, err := loadTable(t, s, r.MetadataLocation).Scan(table.WithSnapshotID(ref.SnapshotID)).PlanFiles(context.Background())
		require.NoError(t, err)
		return taskPaths(tasks)
	}

	r1 := set(res.MetadataLocation, res.Metadata, icebergmeta.TagsInput{Set: []icebergmeta.Tag{
		{Name: "group.billing", SnapshotID: 10, Files: []icebergmeta.AddedFile{f1}, Summary: map[string]string{"mink.group-offsets": "0:10"}},
		{Name: "group.etl", SnapshotID: 11},
	}})
	md := r1.Parsed
	require.Equal(t, int64(1), md.CurrentSnapshot().SnapshotID, "main does not move")
	require.Len(t, slices.Collect(md.SnapshotLogs()), logLen, "the snapshot-log lists main only")
	require.Equal(t, int64(3), md.LastSequenceNumber())
	require.Equal(t, []int64{2, 3}, []int64{r1.Snapshots[0].SequenceNumber, r1.Snapshots[1].SequenceNumber})
	b := md.SnapshotByID(10)
	require.Equal(t, int64(1), *b.ParentSnapshotID)
	require.Equal(t, "0:10", b.Summary.Properties["mink.group-offsets"])
	require.Equal(t, "10", b.Summary.Properties["total-records"])
	refs := maps.Collect(md.Refs())
	require.Equal(t, table.TagRef, refs["group.billing"].SnapshotRefType)
	require.Equal(t, int64(11), refs["group.etl"].SnapshotID)
	require.Equal(t, []string{f1.Path}, tagged(r1, "group.billing"))
	require.Empty(t, tagged(r1, "group.etl"))

	// Move billing, remove etl: both old snapshots go.
	r2 := set(r1.MetadataLocation, r1.Metadata, icebergmeta.TagsInput{
		Set: []icebergmeta.Tag{{Name: "group.billing", SnapshotID: 12, Files: []icebergmeta.AddedFile{f1, f2, f3}}}, Remove: []string{"group.etl"}})
	require.ElementsMatch(t, []int64{10, 11}, r2.Expired)
	require.Nil(t, r2.Parsed.SnapshotByID(10))
	require.Nil(t, r2.Parsed.SnapshotByName("group.etl"))
	require.ElementsMatch(t, []string{f1.Path, f2.Path, f3.Path}, tagged(r2, "group.billing"))

	next := s.commit(t, r2.MetadataLocation, r2.Metadata, 20, now.Add(2*time.Second), rangeFile(0, 20, 30, t0, 0.1, 5))
	require.Equal(t, int64(5), next.SequenceNumber, "sequence numbers are never reused")
	require.Equal(t, int64(1), *next.Parsed.SnapshotByID(20).ParentSnapshotID)
	require.NotNil(t, next.Parsed.SnapshotByName("group.billing"))

	for _, bad := range []icebergmeta.TagsInput{
		{Set: []icebergmeta.Tag{{Name: "main", SnapshotID: 30}}},
		{Set: []icebergmeta.Tag{{Name: "group.x", SnapshotID: 1}}},
		{Remove: []string{"group.nope"}},
		{Set: []icebergmeta.Tag{{Name: "group.x", SnapshotID: 31}}, Remove: []string{"group.x"}},
	} {
		bad.MetadataLocation, bad.Metadata, bad.Now = next.MetadataLocation, next.Metadata, now
		_, err := icebergmeta.SetTags(bad)
		require.Error(t, err, "%+v", bad)
	}
}

// TestSetProperties: set and removed properties reach the metadata; no
// change gives no metadata file; reserved properties are refused.
func TestSetProperties(t *testing.T) {
	s := newStore()
	metaLoc, meta := s.newTable(t, map[string]string{"a": "1", "b": "2"})
	u, err := icebergmeta.SetProperties(metaLoc, meta, nil, map[string]string{"a": "3", "mink.group-tags": "billing,etl-*"}, []string{"b"})
	require.NoError(t, err)
	props := u.Parsed.Properties()
	require.Equal(t, "3", props["a"])
	require.Equal(t, "billing,etl-*", props["mink.group-tags"])
	require.NotContains(t, props, "b")
	require.Contains(t, u.MetadataLocation, "/metadata/00001-")
	none, err := icebergmeta.SetProperties(u.MetadataLocation, u.Metadata, nil, map[string]string{"a": "3"}, []string{"b"})
	require.NoError(t, err)
	require.Nil(t, none)
	_, err = icebergmeta.SetProperties(u.MetadataLocation, u.Metadata, nil, map[string]string{"format-version": "1"}, nil)
	require.Error(t, err)
}
