package icebergmeta

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// Table properties of manifest merging on append (Iceberg's MergeAppend;
// names from the Java implementation's TableProperties).
const (
	// PropManifestMergeEnabled turns merging on or off ("true"/"false").
	PropManifestMergeEnabled = "commit.manifest-merge.enabled"
	// PropManifestMinCountToMerge is the number of data manifests at which
	// an append merges the small ones.
	PropManifestMinCountToMerge = "commit.manifest.min-count-to-merge"
	// PropManifestTargetSize is the size in bytes below which a manifest
	// counts as small.
	PropManifestTargetSize = "commit.manifest.target-size-bytes"
)

// Defaults of the merge properties. Java's min count is 100; Mink commits
// every few hundred milliseconds and every table load plans every
// manifest, so it merges sooner.
const (
	DefaultManifestMinCountToMerge = 16
	DefaultManifestTargetSize      = 8 << 20
)

// mergeManifests bounds the manifests a snapshot lists (and so what every
// scan must read). manifests is the new snapshot's list, the new manifest
// of the commit first. The manifests smallManifests picks are rewritten as
// one manifest named loc, in place of the first of them: their live
// entries become EXISTING with their snapshot id and sequence numbers
// kept; DELETED entries are dropped (they were recorded by the snapshots
// that deleted them). The commit's own manifest is left as it is, so its
// entries stay ADDED (Iceberg spec: "Manifests").
//
// It returns the list to write and the merged manifest's file (nil when
// nothing was merged).
func mergeManifests(ctx context.Context, read ReadFunc, base table.Metadata, manifests []iceberg.ManifestFile,
	snapshotID int64, loc string) ([]iceberg.ManifestFile, *OutputFile, error) {
	small := smallManifests(base.Properties(), manifests)
	if small == nil {
		return manifests, nil, nil
	}
	var entries []iceberg.ManifestEntry
	for _, i := range small {
		es, err := manifestEntries(ctx, read, manifests[i])
		if err != nil {
			return nil, nil, err
		}
		for _, e := range es {
			sid, seq := e.SnapshotID(), e.SequenceNum()
			entries = append(entries, iceberg.NewManifestEntry(iceberg.EntryStatusEXISTING, &sid, &seq, e.FileSequenceNum(), e.DataFile()))
		}
	}
	merged, file, err := writeManifest(loc, base.PartitionSpec(), base.CurrentSchema(), snapshotID, entries)
	if err != nil {
		return nil, nil, fmt.Errorf("write merged manifest: %w", err)
	}
	out := make([]iceberg.ManifestFile, 0, len(manifests)-len(small)+1)
	for i, m := range manifests {
		switch {
		case i == small[0]:
			out = append(out, merged)
		case slices.Contains(small, i):
		default:
			out = append(out, m)
		}
	}
	return out, file, nil
}

// smallManifests returns the positions in manifests (a new snapshot's
// list, the commit's own manifest first) of the data manifests to merge,
// in list order, or nil: when merging is enabled (props) and the list
// holds at least the min count of data manifests, the parent's data
// manifests smaller than the target size, if there are two or more.
func smallManifests(props iceberg.Properties, manifests []iceberg.ManifestFile) []int {
	if !props.GetBool(PropManifestMergeEnabled, true) || len(manifests) < 2 {
		return nil
	}
	minCount := props.GetInt(PropManifestMinCountToMerge, DefaultManifestMinCountToMerge)
	target := props.GetInt64(PropManifestTargetSize, DefaultManifestTargetSize)
	data := 0
	for _, m := range manifests {
		if m.ManifestContent() == iceberg.ManifestContentData {
			data++
		}
	}
	if data < max(minCount, 2) {
		return nil
	}
	var small []int
	for i, m := range manifests[1:] {
		if m.ManifestContent() == iceberg.ManifestContentData && m.Length() < target {
			small = append(small, i+1)
		}
	}
	if len(small) < 2 {
		return nil
	}
	return small
}
