package icebergmeta_test

import (
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/icebergmeta"
)

// TestSetStatistics: a statistics file is registered in a new metadata file
// that changes no snapshot and logs the previous one; a newer file replaces
// it (one entry); a file of a snapshot not in the metadata is refused; and
// a commit that expires the snapshot drops its entry.
func TestSetStatistics(t *testing.T) {
	t0, now := clock()
	s := newStore()
	metaLoc, meta := s.newTable(t, iceberg.Properties{icebergmeta.PropMaxSnapshotAge: "60000"})
	res := s.commit(t, metaLoc, meta, 1, now, rangeFile(0, 0, 10, t0, 0.1, 5))
	res = s.commit(t, res.MetadataLocation, res.Metadata, 2, now.Add(time.Second), rangeFile(0, 10, 20, t0, 0.1, 5))
	file := func(snap int64) table.StatisticsFile {
		return table.StatisticsFile{SnapshotID: snap, StatisticsPath: icebergmeta.StatisticsLocation(location, snap, [16]byte{1}),
			FileSizeInBytes: 100, FileFooterSizeInBytes: 60, BlobMetadata: []table.BlobMetadata{{
				Type: table.BlobTypeApacheDatasketchesThetaV1, SnapshotID: snap, SequenceNumber: snap,
				Fields: []int32{3}, Properties: map[string]string{"ndv": "10"}}}}
	}
	set := func(loc string, md []byte, snap int64) (*icebergmeta.MetadataUpdate, error) {
		return icebergmeta.SetStatistics(icebergmeta.StatisticsInput{Metadata: md, MetadataLocation: loc, File: file(snap)})
	}
	u1, err := set(res.MetadataLocation, res.Metadata, 1)
	require.NoError(t, err)
	md, err := table.ParseMetadataBytes(u1.Metadata)
	require.NoError(t, err)
	require.Equal(t, int64(2), md.CurrentSnapshot().SnapshotID)
	require.Len(t, md.Snapshots(), 2)
	var stats []table.StatisticsFile
	for sf := range md.Statistics() {
		stats = append(stats, sf)
	}
	require.Equal(t, []table.StatisticsFile{file(1)}, stats)
	var logged []string
	for e := range md.PreviousFiles() {
		logged = append(logged, e.MetadataFile)
	}
	require.Contains(t, logged, res.MetadataLocation)
	require.Contains(t, u1.MetadataLocation, "/metadata/00003-")

	u2, err := set(u1.MetadataLocation, u1.Metadata, 2)
	require.NoError(t, err)
	stats = stats[:0]
	for sf := range u2.Parsed.Statistics() {
		stats = append(stats, sf)
	}
	require.Equal(t, []table.StatisticsFile{file(2)}, stats, "the newer file replaces the older")

	_, err = set(u2.MetadataLocation, u2.Metadata, 99)
	require.ErrorIs(t, err, icebergmeta.ErrSnapshotGone)

	// Two minutes later snapshots 1 and 2 are past the 60 s age: the commit
	// expires them (the new one is kept) and drops the statistics of 2.
	res = s.commit(t, u2.MetadataLocation, u2.Metadata, 3, now.Add(2*time.Minute), rangeFile(0, 20, 30, t0, 0.1, 5))
	require.Equal(t, []int64{1, 2}, res.Expired)
	for range res.Parsed.Statistics() {
		t.Fatal("statistics of an expired snapshot kept")
	}
}
