package icebergmeta

import (
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"
)

// planRewrite is pure: these cases check what it decides from in-memory
// parent manifests, without writing or reading a file.
func TestPlanRewrite(t *testing.T) {
	spec, err := PartitionSpec(avroTestSchema())
	require.NoError(t, err)
	const snapshotID, parentID = 9, 2
	file := func(name string, p int32, n int64) AddedFile {
		return AddedFile{Path: "s3://mink/t/data/" + name + ".parquet", Partition: p, FileSize: 100 + n}
	}
	existing := func(f AddedFile, records, addedBy, seq int64) iceberg.ManifestEntry {
		fileSeq := seq
		return iceberg.NewManifestEntry(iceberg.EntryStatusEXISTING, &addedBy, &seq, &fileSeq,
			avroTestFile(t, spec, f.Path, f.Partition, records))
	}
	a, b, c := file("0/a", 0, 10), file("0/b", 0, 20), file("1/c", 1, 30)
	parents := []parentManifest{
		{file: iceberg.NewManifestFile(2, "s3://mink/t/metadata/x-m0.avro", 1000, 0, 1).Build(),
			entries: []iceberg.ManifestEntry{existing(a, 10, 1, 1), existing(b, 20, 1, 1)}},
		{file: iceberg.NewManifestFile(2, "s3://mink/t/metadata/y-m0.avro", 1000, 0, 2).Build(),
			entries: []iceberg.ManifestEntry{existing(c, 30, 2, 2)}},
		// A delete manifest: carried over, its entries not read.
		{file: iceberg.NewManifestFile(2, "s3://mink/t/metadata/z-m0.avro", 1000, 0, 2).
			Content(iceberg.ManifestContentDeletes).Build()},
	}
	set := func(fs ...AddedFile) map[string]struct{} {
		out := map[string]struct{}{}
		for _, f := range fs {
			out[f.Path] = struct{}{}
		}
		return out
	}

	// Delete a: its manifest is rewritten (a DELETED by the new snapshot,
	// b EXISTING as it was), the others carried over.
	p, err := planRewrite(spec, snapshotID, parentID, parents, set(a), nil, false)
	require.NoError(t, err)
	require.Equal(t, table.OpDelete, p.op)
	require.Empty(t, p.added)
	require.Len(t, p.manifests, 3)
	es := p.manifests[0].entries
	require.Len(t, es, 2)
	require.Equal(t, iceberg.EntryStatusDELETED, es[0].Status())
	require.EqualValues(t, snapshotID, es[0].SnapshotID())
	require.EqualValues(t, 1, es[0].SequenceNum())
	require.Equal(t, iceberg.EntryStatusEXISTING, es[1].Status())
	require.EqualValues(t, 1, es[1].SnapshotID())
	require.Nil(t, p.manifests[1].entries)
	require.Nil(t, p.manifests[2].entries)
	require.Equal(t, fileChanges{deletedFiles: 1, deletedRecords: 10, deletedSize: 110,
		partitions: map[int32]struct{}{0: {}}}, p.changes)

	// Overwrite c with d; a file removed in the same commit may come back.
	d := file("2/d", 2, 5)
	d.Stats.RecordCount = 5
	p, err = planRewrite(spec, snapshotID, parentID, parents, set(c, a), []AddedFile{d, a}, false)
	require.NoError(t, err)
	require.Equal(t, table.OpOverwrite, p.op)
	require.Len(t, p.added, 2)
	require.Equal(t, iceberg.EntryStatusADDED, p.added[0].Status())
	require.EqualValues(t, snapshotID, p.added[0].SnapshotID())
	require.NotNil(t, p.manifests[0].entries)
	require.NotNil(t, p.manifests[1].entries)
	require.Equal(t, map[int32]struct{}{0: {}, 1: {}, 2: {}}, p.changes.partitions)

	// Replace: the record counts must match.
	_, err = planRewrite(spec, snapshotID, parentID, parents, set(c), []AddedFile{d}, true)
	require.ErrorContains(t, err, "a replace adds 5 records and removes 30")
	d.Stats.RecordCount = 30
	p, err = planRewrite(spec, snapshotID, parentID, parents, set(c), []AddedFile{d}, true)
	require.NoError(t, err)
	require.Equal(t, table.OpReplace, p.op)

	_, err = planRewrite(spec, snapshotID, parentID, parents, set(file("0/x", 0, 1)), nil, false)
	require.ErrorContains(t, err, "data file s3://mink/t/data/0/x.parquet is not in snapshot 2")
	_, err = planRewrite(spec, snapshotID, parentID, parents, set(a), []AddedFile{b}, false)
	require.ErrorContains(t, err, "data file s3://mink/t/data/0/b.parquet is already in the table")
	_, err = planRewrite(spec, snapshotID, parentID, parents, set(a), []AddedFile{d, d}, false)
	require.ErrorContains(t, err, "added twice")
}
