package icebergmeta

import (
	"context"
	"fmt"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// Append makes a new snapshot (operation append) whose manifest list holds
// one new manifest with the added files followed by the parent's manifests
// (the small ones merged into one once there are
// commit.manifest.min-count-to-merge, see mergeManifests), and the metadata
// JSON that makes it the current snapshot of branch main.
//
// The new snapshot's parent is the current snapshot (none for the first
// append); its sequence number is last-sequence-number + 1, inherited by the
// new manifest and its entries (status ADDED). The previous metadata file is
// added to the metadata-log (trimmed to write.metadata.previous-versions-max,
// default 100). The summary carries added-data-files, added-records,
// added-files-size, changed-partition-count and the totals (total-data-files,
// total-records, total-files-size, total-delete-files,
// total-position-deletes, total-equality-deletes) from the parent's.
//
// Errors: ErrNoFiles when in.Added is empty; otherwise a wrapped error for
// metadata that does not parse or is not format version 2, a metadata
// location without a version number, a SnapshotID that is not positive or
// already in the table, a file added twice, or a Read failure.
func Append(ctx context.Context, in AppendInput) (*CommitResult, error) {
	if len(in.Added) == 0 {
		return nil, ErrNoFiles
	}
	c, err := openCommit("append", in.MetadataLocation, in.Metadata, in.Parsed, in.SnapshotID, in.Now, in.CommitUUID)
	if err != nil {
		return nil, err
	}
	c.schemas, c.expire = in.Schemas, in.Expire
	var changes fileChanges
	added, err := addedEntries(c.base.PartitionSpec(), c.snapshotID, in.Added, nil, &changes)
	if err != nil {
		return nil, fmt.Errorf("icebergmeta: append: %w", err)
	}
	parent := c.base.CurrentSnapshot()
	var parentID *int64
	var carried []iceberg.ManifestFile
	if parent != nil {
		id := parent.SnapshotID
		parentID = &id
		if err := checkParent("append", parent, in.Read); err != nil {
			return nil, err
		}
		if carried, err = parentManifests(ctx, in.Read, parent); err != nil {
			return nil, fmt.Errorf("icebergmeta: append: %w", err)
		}
	}

	res, err := c.writeAppend(ctx, in, parentID, added, carried, changes.summary(table.OpAppend, parentSummary(parent), in.Summary))
	if err != nil {
		return nil, fmt.Errorf("icebergmeta: append: %w", err)
	}
	return res, nil
}

// writeAppend writes an append's manifest of added entries (m0), merges
// the manifest list (mergeManifests, unless in.NoMerge; the merged
// manifest is m1) and finishes the commit. The list holds the new
// manifest first, as Java's fast append does, then carried, the parent's
// manifests as they were listed.
func (c *commit) writeAppend(ctx context.Context, in AppendInput, parentID *int64, added []iceberg.ManifestEntry,
	carried []iceberg.ManifestFile, summary table.Summary) (*CommitResult, error) {
	manifest, file, err := writeManifest(c.manifestLocation(0), c.base.PartitionSpec(), c.base.CurrentSchema(), c.snapshotID, added)
	if err != nil {
		return nil, fmt.Errorf("write manifest: %w", err)
	}
	manifests := append([]iceberg.ManifestFile{manifest}, carried...)
	files := []OutputFile{*file}
	if !in.NoMerge {
		var merged *OutputFile
		if manifests, merged, err = mergeManifests(ctx, in.Read, c.base, manifests, c.snapshotID, c.manifestLocation(1)); err != nil {
			return nil, err
		}
		if merged != nil {
			files = append(files, *merged)
		}
	}
	return c.finish(parentID, summary, manifests, files)
}

// addedEntries are the manifest entries of files, added by snapshot
// snapshotID (status ADDED), counted in changes. Their sequence numbers
// stay unset: readers inherit the manifest's, which the manifest list
// writer sets to the snapshot's (spec: "Sequence Number Inheritance").
//
// Errors: a path given twice, a path inTable reports (when not nil), or a
// file dataFile rejects.
func addedEntries(spec iceberg.PartitionSpec, snapshotID int64, files []AddedFile, inTable func(path string) bool,
	changes *fileChanges) ([]iceberg.ManifestEntry, error) {
	entries := make([]iceberg.ManifestEntry, 0, len(files))
	paths := make(map[string]struct{}, len(files))
	for _, f := range files {
		if _, dup := paths[f.Path]; dup {
			return nil, fmt.Errorf("data file %s added twice", f.Path)
		}
		paths[f.Path] = struct{}{}
		if inTable != nil && inTable(f.Path) {
			return nil, fmt.Errorf("data file %s is already in the table", f.Path)
		}
		df, err := dataFile(spec, f)
		if err != nil {
			return nil, fmt.Errorf("data file %s: %w", f.Path, err)
		}
		entries = append(entries, iceberg.NewManifestEntry(iceberg.EntryStatusADDED, &snapshotID, nil, nil, df))
		changes.add(f)
	}
	return entries, nil
}

// dataFile is the manifest's data_file struct for f: Parquet, partition
// {PartitionFieldID: f.Partition}, and every statistic of f.Stats.
func dataFile(spec iceberg.PartitionSpec, f AddedFile) (iceberg.DataFile, error) {
	if f.Partition < 0 {
		return nil, fmt.Errorf("negative partition %d", f.Partition)
	}
	b, err := iceberg.NewDataFileBuilder(spec, iceberg.EntryContentData, f.Path, iceberg.ParquetFile,
		map[int]any{PartitionFieldID: f.Partition}, nil, nil, f.Stats.RecordCount, f.FileSize)
	if err != nil {
		return nil, err
	}
	// A nil statistic stays null in the manifest (TestDataFileMissingStats).
	s := f.Stats
	b.ColumnSizes(s.ColumnSizes).ValueCounts(s.ValueCounts).NullValueCounts(s.NullValueCounts).
		NaNValueCounts(s.NaNValueCounts).LowerBoundValues(s.LowerBounds).UpperBoundValues(s.UpperBounds).
		SplitOffsets(s.SplitOffsets)
	return b.Build(), nil
}
