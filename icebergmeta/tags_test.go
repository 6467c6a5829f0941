package icebergmeta_test

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
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
		in.MetadataLocation, in.Metadata, in.Now, in.Read = loc, md, now.Add(time.Second), s.read
		r, err := icebergmeta.SetTags(context.Background(), in)
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
	require.Equal(t, table.OpDelete, b.Summary.Operation, "billing drops f2 and f3 of its parent")
	require.Equal(t, table.OpDelete, md.SnapshotByID(11).Summary.Operation)
	require.Equal(t, "0", md.SnapshotByID(11).Summary.Properties["total-records"])
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
	require.Equal(t, table.OpReplace, r2.Parsed.SnapshotByID(12).Summary.Operation, "exactly its parent's files")

	next := s.commit(t, r2.MetadataLocation, r2.Metadata, 20, now.Add(2*time.Second), rangeFile(0, 20, 30, t0, 0.1, 5))
	require.Equal(t, int64(5), next.SequenceNumber, "sequence numbers are never reused")
	require.Equal(t, int64(1), *next.Parsed.SnapshotByID(20).ParentSnapshotID)
	require.NotNil(t, next.Parsed.SnapshotByName("group.billing"))

	for _, bad := range []icebergmeta.TagsInput{
		{Set: []icebergmeta.Tag{{Name: "main", SnapshotID: 30}}},
		{Set: []icebergmeta.Tag{{Name: "group.x", SnapshotID: 1}}},
		{Remove: []string{"group.nope"}},
		{Set: []icebergmeta.Tag{{Name: "group.x", SnapshotID: 31}}, Remove: []string{"group.x"}},
		{Set: []icebergmeta.Tag{{Name: "group.x", SnapshotID: 32, Files: []icebergmeta.AddedFile{f1, f1}}}},
	} {
		bad.MetadataLocation, bad.Metadata, bad.Now, bad.Read = next.MetadataLocation, next.Metadata, now, s.read
		_, err := icebergmeta.SetTags(context.Background(), bad)
		require.Error(t, err, "%+v", bad)
	}
}

// TestSetTagsChangeAgainstParent: a tag's snapshot is an honest change
// against its parent, main's current snapshot (files A, B, C committed by
// snapshot 1, D by snapshot 2): the parent's files it keeps stay as the
// parent lists them (EXISTING in a rewritten manifest with their snapshot
// id and sequence numbers, or in the parent's manifest carried over), the
// ones it drops are DELETED, and only its new files are ADDED by it. So an
// incremental reader from the parent to the tag (the ADDED entries of an
// append snapshot) sees only the tail T, never the parent's rows again.
// The operation says which: overwrite, replace, append. iceberg-go reads
// exactly the tag's files at each snapshot.
func TestSetTagsChangeAgainstParent(t *testing.T) {
	t0, now := clock()
	s := newStore()
	metaLoc, meta := s.newTable(t, nil)
	a, b, c := rangeFile(0, 0, 10, t0, 0.1, 5), rangeFile(1, 0, 20, t0, 0.1, 5), rangeFile(2, 0, 40, t0, 0.1, 5)
	d, tail := rangeFile(0, 10, 15, t0, 0.1, 5), rangeFile(0, 15, 18, t0, 0.1, 5)
	r1 := s.commit(t, metaLoc, meta, 1, now, a, b, c)
	r2 := s.commit(t, r1.MetadataLocation, r1.Metadata, 2, now.Add(time.Second), d)
	parentManifests := r2.Manifests
	require.Len(t, parentManifests, 2, "d's manifest, then a, b and c's")
	parentTotal := r2.Parsed.CurrentSnapshot().Summary.Properties["total-records"]
	require.Equal(t, "75", parentTotal)

	res, err := icebergmeta.SetTags(context.Background(), icebergmeta.TagsInput{
		Metadata: r2.Metadata, MetadataLocation: r2.MetadataLocation, Now: now.Add(2 * time.Second), Read: s.read,
		Set: []icebergmeta.Tag{
			{Name: "group.cut", SnapshotID: 10, Files: []icebergmeta.AddedFile{a, b, d, tail}, Summary: map[string]string{"mink.group": "cut"}},
			{Name: "group.same", SnapshotID: 11, Files: []icebergmeta.AddedFile{a, b, c, d}},
			{Name: "group.ahead", SnapshotID: 12, Files: []icebergmeta.AddedFile{a, b, c, d, tail}},
		}})
	require.NoError(t, err)
	for _, f := range res.Files {
		s.put(f.Location, f.Content)
	}
	s.put(res.MetadataLocation, res.Metadata)
	locs := map[string]bool{}
	for _, f := range res.Files {
		require.False(t, locs[f.Location], "file %s written twice", f.Location)
		locs[f.Location] = true
	}
	tbl := loadTable(t, s, res.MetadataLocation)
	md := tbl.Metadata()

	type entry struct {
		status    iceberg.ManifestEntryStatus
		snap, seq int64
		fileSeq   int64
	}
	entries := func(snap *table.Snapshot) map[string]entry {
		t.Helper()
		fs := s.memIO(t)
		mans, err := snap.Manifests(fs)
		require.NoError(t, err)
		out := map[string]entry{}
		for _, m := range mans {
			for en, err := range m.Entries(fs, false) {
				require.NoError(t, err)
				require.NotContains(t, out, en.DataFile().FilePath())
				out[en.DataFile().FilePath()] = entry{en.Status(), en.SnapshotID(), en.SequenceNum(), *en.FileSequenceNum()}
			}
		}
		return out
	}
	summary := func(snap *table.Snapshot, keys ...string) map[string]string {
		out := map[string]string{}
		for _, k := range keys {
			if v, ok := snap.Summary.Properties[k]; ok {
				out[k] = v
			}
		}
		return out
	}
	keys := []string{"added-data-files", "added-records", "deleted-data-files", "deleted-records", "total-data-files", "total-records"}

	// Cut: a and b kept, c dropped, d carried over, the tail added.
	cut := md.SnapshotByID(10)
	require.Equal(t, int64(2), *cut.ParentSnapshotID)
	require.Equal(t, table.OpOverwrite, cut.Summary.Operation)
	require.Equal(t, map[string]string{"added-data-files": "1", "added-records": "3", "deleted-data-files": "1",
		"deleted-records": "40", "total-data-files": "4", "total-records": "38"}, summary(cut, keys...))
	require.Equal(t, "cut", cut.Summary.Properties["mink.group"])
	require.Equal(t, map[string]entry{
		a.Path:    {iceberg.EntryStatusEXISTING, 1, 1, 1},
		b.Path:    {iceberg.EntryStatusEXISTING, 1, 1, 1},
		c.Path:    {iceberg.EntryStatusDELETED, 10, 1, 1},
		d.Path:    {iceberg.EntryStatusADDED, 2, 2, 2},
		tail.Path: {iceberg.EntryStatusADDED, 10, 3, 3},
	}, entries(cut))
	require.Equal(t, paths(a, b, d, tail), plannedPaths(t, tbl, table.WithSnapshotID(10)))
	ts := res.Snapshots[0]
	require.Equal(t, table.OpOverwrite, ts.Operation)
	require.Equal(t, int64(38), ts.TotalRecords)
	require.Len(t, ts.Manifests, 3)
	require.Regexp(t, `-t0\.avro$`, ts.Manifests[0], "the tail's manifest first")
	require.Equal(t, parentManifests[0], ts.Manifests[1], "d's manifest carried over")
	require.Regexp(t, `-t0-m1\.avro$`, ts.Manifests[2], "a, b and c's rewritten")

	// Same: exactly the parent's files, its manifests as they were.
	same := md.SnapshotByID(11)
	require.Equal(t, table.OpReplace, same.Summary.Operation)
	require.Equal(t, map[string]string{"total-data-files": "4", "total-records": parentTotal}, summary(same, keys...))
	require.Equal(t, parentManifests, res.Snapshots[1].Manifests)
	require.Equal(t, paths(a, b, c, d), plannedPaths(t, tbl, table.WithSnapshotID(11)))

	// Ahead: the parent's files and the tail: an append of the tail only.
	ahead := md.SnapshotByID(12)
	require.Equal(t, table.OpAppend, ahead.Summary.Operation)
	require.Equal(t, map[string]string{"added-data-files": "1", "added-records": "3", "total-data-files": "5", "total-records": "78"},
		summary(ahead, keys...))
	es := entries(ahead)
	require.Equal(t, entry{iceberg.EntryStatusADDED, 12, 5, 5}, es[tail.Path])
	for _, f := range []icebergmeta.AddedFile{a, b, c, d} {
		require.NotEqual(t, int64(12), es[f.Path].snap, "%s is not added by the tag", f.Path)
	}
	require.Equal(t, append([]string{res.Snapshots[2].Manifests[0]}, parentManifests...), res.Snapshots[2].Manifests)
	require.Regexp(t, `-t2\.avro$`, res.Snapshots[2].Manifests[0])
	require.Equal(t, paths(a, b, c, d, tail), plannedPaths(t, tbl, table.WithSnapshotID(12)))
	require.Equal(t, paths(a, b, c, d), plannedPaths(t, tbl), "main unchanged")
}

// TestSetTagsWithoutParent: on a table without a snapshot a tag's files
// are all ADDED by an append with no parent.
func TestSetTagsWithoutParent(t *testing.T) {
	t0, now := clock()
	s := newStore()
	metaLoc, meta := s.newTable(t, nil)
	a := rangeFile(0, 0, 10, t0, 0.1, 5)
	res, err := icebergmeta.SetTags(context.Background(), icebergmeta.TagsInput{Metadata: meta, MetadataLocation: metaLoc,
		Now: now, Set: []icebergmeta.Tag{{Name: "group.x", SnapshotID: 5, Files: []icebergmeta.AddedFile{a}}}})
	require.NoError(t, err, "no Read needed without a parent")
	snap := res.Parsed.SnapshotByID(5)
	require.Nil(t, snap.ParentSnapshotID)
	require.Equal(t, table.OpAppend, snap.Summary.Operation)
	require.Equal(t, "10", snap.Summary.Properties["added-records"])
	require.Equal(t, "10", snap.Summary.Properties["total-records"])
	require.Nil(t, res.Snapshots[0].ParentID)
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
