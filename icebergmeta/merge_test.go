package icebergmeta_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/icebergmeta"
)

// TestAppendMergesManifests: with commit.manifest.min-count-to-merge 4,
// appends never list more than 4 manifests; merged entries are EXISTING
// (the others ADDED) with the snapshot id and sequence numbers of the append that added
// them; iceberg-go plans every file, also after a delete that rewrites
// the merged manifest; and merging off keeps one manifest per append.
func TestAppendMergesManifests(t *testing.T) {
	t0, now := clock()
	run := func(props iceberg.Properties, appends int) (*store, *icebergmeta.CommitResult, []icebergmeta.AddedFile, []int) {
		s := newStore()
		metaLoc, meta := s.newTable(t, props)
		var files []icebergmeta.AddedFile
		var counts []int
		res := &icebergmeta.CommitResult{MetadataLocation: metaLoc, Metadata: meta}
		for i := 0; i < appends; i++ {
			f := rangeFile(int32(i%2), int64(i*100), int64(i*100+100), t0, 0.1, 5)
			files = append(files, f)
			res = s.commit(t, res.MetadataLocation, res.Metadata, int64(1000+i), now.Add(time.Duration(i)*time.Second), f)
			ms := manifestsOf(t, s, res)
			counts = append(counts, len(ms))
			require.Equal(t, paths(files...), plannedPaths(t, loadTable(t, s, res.MetadataLocation)), "append %d", i)
		}
		return s, res, files, counts
	}

	s, res, files, counts := run(iceberg.Properties{icebergmeta.PropManifestMinCountToMerge: "4"}, 11)
	// 1, 2, 3 manifests; the 4th append merges the 3 older ones: 2; …
	require.Equal(t, []int{1, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3}, counts)
	ms := manifestsOf(t, s, res)
	added := map[string]int64{} // path → snapshot id of its append
	for i, f := range files {
		added[f.Path] = int64(1000 + i)
	}
	seen := 0
	for _, m := range ms {
		for _, e := range entriesOf(t, s, m) {
			sid := added[e.DataFile().FilePath()]
			require.Equal(t, sid, e.SnapshotID(), e.DataFile().FilePath())
			require.Equal(t, sid-1000+1, e.SequenceNum(), "data sequence number of %s", e.DataFile().FilePath())
			if m.SnapshotID() == sid { // not merged (yet)
				require.Equal(t, iceberg.EntryStatusADDED, e.Status())
			} else {
				require.Equal(t, iceberg.EntryStatusEXISTING, e.Status(), e.DataFile().FilePath())
			}
			seen++
		}
	}
	require.Equal(t, len(files), seen)
	// The summary totals still count every file.
	tbl := loadTable(t, s, res.MetadataLocation)
	require.Equal(t, "11", tbl.Metadata().CurrentSnapshot().Summary.Properties["total-data-files"])

	// A delete after merging rewrites the merged manifest; the rest stays readable.
	r := s.rewrite(t, res, 9001, now.Add(time.Minute), []string{files[0].Path})
	require.Equal(t, paths(files[1:]...), plannedPaths(t, loadTable(t, s, r.MetadataLocation)))

	_, _, _, counts = run(iceberg.Properties{icebergmeta.PropManifestMinCountToMerge: "4",
		icebergmeta.PropManifestMergeEnabled: "false"}, 6)
	require.Equal(t, []int{1, 2, 3, 4, 5, 6}, counts)
}

func manifestsOf(t *testing.T, s *store, res *icebergmeta.CommitResult) []iceberg.ManifestFile {
	t.Helper()
	b, err := s.read(context.Background(), res.ManifestList)
	require.NoError(t, err)
	ms, err := iceberg.ReadManifestList(bytes.NewReader(b))
	require.NoError(t, err)
	return ms
}

func entriesOf(t *testing.T, s *store, m iceberg.ManifestFile) []iceberg.ManifestEntry {
	t.Helper()
	b, err := s.read(context.Background(), m.FilePath())
	require.NoError(t, err)
	es, err := iceberg.ReadManifest(m, bytes.NewReader(b), true)
	require.NoError(t, err)
	return es
}
