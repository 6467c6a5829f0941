package icebergmeta_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/icebergmeta"
)

func (s *store) rewrite(t testing.TB, prev *icebergmeta.CommitResult, snapshotID int64, now time.Time, removed []string, added ...icebergmeta.AddedFile) *icebergmeta.CommitResult {
	t.Helper()
	res, err := icebergmeta.Rewrite(context.Background(), icebergmeta.RewriteInput{
		Metadata: prev.Metadata, MetadataLocation: prev.MetadataLocation, Removed: removed, Added: added,
		SnapshotID: snapshotID, Now: now, Read: s.read,
	})
	require.NoError(t, err)
	s.keep(res)
	return res
}

func plannedPaths(t *testing.T, tbl *table.Table, opts ...table.ScanOption) []string {
	t.Helper()
	tasks, err := tbl.Scan(opts...).PlanFiles(context.Background())
	require.NoError(t, err)
	var out []string
	for _, task := range tasks {
		out = append(out, task.File.FilePath())
	}
	slices.Sort(out)
	return out
}

func paths(files ...icebergmeta.AddedFile) []string {
	var out []string
	for _, f := range files {
		out = append(out, f.Path)
	}
	slices.Sort(out)
	return out
}

func TestRewriteDeleteAndOverwriteReadBackWithIcebergGo(t *testing.T) {
	ctx := context.Background()
	s := newStore()
	metaLoc, meta := s.newTable(t, nil)
	t0, now := clock()
	a, b, c := rangeFile(0, 0, 500, t0, 0.2, 5.1), rangeFile(0, 500, 1200, t0, 0.1, 6.3), rangeFile(1, 0, 800, t0, 0.5, 4.4)
	d, e := rangeFile(0, 1200, 1500, t0, 1.0, 2.0), rangeFile(1, 800, 1000, t0, 0.9, 3.7)
	r1 := s.commit(t, metaLoc, meta, 1001, now, a, b, c)
	r2 := s.commit(t, r1.MetadataLocation, r1.Metadata, 2002, now.Add(time.Second), d, e)

	// delete: a (partition 0) goes; its manifest is rewritten, the other carried over.
	r3 := s.rewrite(t, r2, 3003, now.Add(2*time.Second), []string{a.Path})
	require.Equal(t, int64(3), r3.SequenceNumber)
	require.Len(t, r3.Files, 2, "one rewritten manifest and the list")
	require.Regexp(t, `-m1\.avro$`, r3.Files[0].Location)

	// overwrite: b is replaced by its part from offset 700, and c is removed.
	b2 := rangeFile(0, 700, 1200, t0, 0.1, 6.3)
	r4 := s.rewrite(t, r3, 4004, now.Add(3*time.Second), []string{b.Path, c.Path}, b2)
	require.Len(t, r4.Files, 3)
	require.Regexp(t, `-m0\.avro$`, r4.Files[0].Location)

	tbl := loadTable(t, s, r4.MetadataLocation)
	md := tbl.Metadata()
	s3, s4 := md.SnapshotByID(3003), md.SnapshotByID(4004)
	require.Equal(t, table.OpDelete, s3.Summary.Operation)
	require.Equal(t, int64(2002), *s3.ParentSnapshotID)
	require.Equal(t, iceberg.Properties{
		"deleted-data-files": "1", "deleted-records": "500", "removed-files-size": "22596",
		"changed-partition-count": "1",
		"total-data-files":        "4", "total-records": "2000", "total-files-size": "90384",
		"total-delete-files": "0", "total-position-deletes": "0", "total-equality-deletes": "0",
	}, s3.Summary.Properties)
	require.Equal(t, table.OpOverwrite, s4.Summary.Operation)
	require.Equal(t, "2", s4.Summary.Properties["deleted-data-files"])
	require.Equal(t, "1500", s4.Summary.Properties["deleted-records"])
	require.Equal(t, "1", s4.Summary.Properties["added-data-files"])
	require.Equal(t, "500", s4.Summary.Properties["added-records"])
	require.Equal(t, "2", s4.Summary.Properties["changed-partition-count"])
	require.Equal(t, "3", s4.Summary.Properties["total-data-files"])
	require.Equal(t, "1000", s4.Summary.Properties["total-records"])

	// Exactly the surviving and added files; time travel still sees the old ones.
	require.Equal(t, paths(b2, d, e), plannedPaths(t, tbl))
	require.Equal(t, paths(b, c, d, e), plannedPaths(t, tbl, table.WithSnapshotID(3003)))
	require.Equal(t, paths(a, b, c, d, e), plannedPaths(t, tbl, table.WithSnapshotID(2002)))

	// Entries: DELETED by the new snapshot, EXISTING keep snapshot and sequence numbers.
	fs := s.memIO(t)
	mans, err := s4.Manifests(fs)
	require.NoError(t, err)
	type entry struct {
		status    iceberg.ManifestEntryStatus
		snap, seq int64
		fileSeq   int64
	}
	got := map[string][]entry{}
	for _, m := range mans {
		for en, err := range m.Entries(fs, false) {
			require.NoError(t, err)
			got[en.DataFile().FilePath()] = append(got[en.DataFile().FilePath()],
				entry{en.Status(), en.SnapshotID(), en.SequenceNum(), *en.FileSequenceNum()})
		}
	}
	require.Equal(t, []entry{{iceberg.EntryStatusADDED, 4004, 4, 4}}, got[b2.Path])
	require.Equal(t, []entry{{iceberg.EntryStatusDELETED, 4004, 1, 1}}, got[b.Path])
	require.Equal(t, []entry{{iceberg.EntryStatusDELETED, 4004, 1, 1}}, got[c.Path])
	require.Equal(t, []entry{{iceberg.EntryStatusADDED, 2002, 2, 2}}, got[d.Path])
	_, stillA := got[a.Path]
	require.False(t, stillA, "a was dropped from the manifest after its delete snapshot")

	// Rows are read through the manifests too (no data files here): the
	// scan's planned record count matches the summary.
	tasks, err := tbl.Scan().PlanFiles(ctx)
	require.NoError(t, err)
	var n int64
	for _, task := range tasks {
		n += task.File.Count()
	}
	require.Equal(t, int64(1000), n)
}

func TestRewriteRejectsUnknownFiles(t *testing.T) {
	s := newStore()
	metaLoc, meta := s.newTable(t, nil)
	t0, now := clock()
	a := rangeFile(0, 0, 500, t0, 0.2, 5.1)
	r1 := s.commit(t, metaLoc, meta, 1001, now, a)
	_, err := icebergmeta.Rewrite(context.Background(), icebergmeta.RewriteInput{
		Metadata: r1.Metadata, MetadataLocation: r1.MetadataLocation, Removed: []string{location + "/data/0/9-10-1.parquet"},
		SnapshotID: 2, Now: now, Read: s.read,
	})
	require.ErrorContains(t, err, "is not in snapshot")
	_, err = icebergmeta.Rewrite(context.Background(), icebergmeta.RewriteInput{
		Metadata: r1.Metadata, MetadataLocation: r1.MetadataLocation, SnapshotID: 2, Now: now, Read: s.read,
	})
	require.Error(t, err)
	_, err = icebergmeta.Rewrite(context.Background(), icebergmeta.RewriteInput{
		Metadata: meta, MetadataLocation: metaLoc, Removed: []string{a.Path}, SnapshotID: 2, Now: now, Read: s.read,
	})
	require.ErrorContains(t, err, "no current snapshot")
}

// TestRewriteReplace: a replace puts files holding the same rows in the
// place of others (Iceberg spec: operation "replace", data unchanged); it
// is refused when the record counts differ. A manifest left with only
// DELETED entries is not carried into later snapshots, so replacing files
// every round does not grow the manifest list.
func TestRewriteReplace(t *testing.T) {
	s := newStore()
	metaLoc, meta := s.newTable(t, nil)
	t0, now := clock()
	// Two tail files of partition 0 in two load snapshots, then one indexed
	// file of the same 300 records.
	tail1, tail2 := rangeFile(0, 0, 100, t0, 0.2, 5.1), rangeFile(0, 100, 300, t0, 0.1, 6.3)
	r1 := s.commit(t, metaLoc, meta, 1001, now, tail1)
	r2 := s.commit(t, r1.MetadataLocation, r1.Metadata, 2002, now.Add(time.Second), tail2)
	indexed := rangeFile(0, 0, 300, t0, 0.1, 6.3)

	_, err := icebergmeta.Rewrite(context.Background(), icebergmeta.RewriteInput{
		Metadata: r2.Metadata, MetadataLocation: r2.MetadataLocation, Removed: []string{tail1.Path},
		Added: []icebergmeta.AddedFile{indexed}, Replace: true, SnapshotID: 3003, Now: now.Add(2 * time.Second), Read: s.read,
	})
	require.ErrorContains(t, err, "a replace adds 300 records and removes 100")

	res, err := icebergmeta.Rewrite(context.Background(), icebergmeta.RewriteInput{
		Metadata: r2.Metadata, MetadataLocation: r2.MetadataLocation, Removed: []string{tail1.Path, tail2.Path},
		Added: []icebergmeta.AddedFile{indexed}, Replace: true, SnapshotID: 3003, Now: now.Add(2 * time.Second), Read: s.read,
	})
	require.NoError(t, err)
	s.keep(res)
	tbl := loadTable(t, s, res.MetadataLocation)
	snap := tbl.Metadata().CurrentSnapshot()
	require.Equal(t, table.OpReplace, snap.Summary.Operation)
	require.Equal(t, "300", snap.Summary.Properties["total-records"])
	require.Equal(t, "300", snap.Summary.Properties["added-records"])
	require.Equal(t, "300", snap.Summary.Properties["deleted-records"])
	require.Equal(t, paths(indexed), plannedPaths(t, tbl))
	require.Len(t, manifestsOf(t, s, res), 3, "the added manifest and the two tail manifests, all DELETED")

	// The next append lists the new manifest and the indexed file's, not
	// the two that only record the replace's deletions.
	next := rangeFile(0, 300, 400, t0, 0.1, 6.3)
	r4 := s.commit(t, res.MetadataLocation, res.Metadata, 4004, now.Add(3*time.Second), next)
	ms := manifestsOf(t, s, r4)
	require.Len(t, ms, 2)
	for _, m := range ms {
		require.True(t, m.HasAddedFiles() || m.HasExistingFiles(), m.FilePath())
	}
	require.Equal(t, paths(indexed, next), plannedPaths(t, loadTable(t, s, r4.MetadataLocation)))
}
