package icebergmeta

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
)

// Snapshot summary keys (Iceberg spec, "Optional Snapshot Summary Fields";
// the names Java's SnapshotSummary and iceberg-go write). iceberg-go keeps
// its summary collector private, so Append computes them here.
const (
	summaryAddedDataFiles        = "added-data-files"
	summaryAddedRecords          = "added-records"
	summaryAddedFilesSize        = "added-files-size"
	summaryChangedPartitionCount = "changed-partition-count"
	summaryTotalDataFiles        = "total-data-files"
	summaryTotalDeleteFiles      = "total-delete-files"
	summaryTotalRecords          = "total-records"
	summaryTotalFilesSize        = "total-files-size"
	summaryTotalPositionDeletes  = "total-position-deletes"
	summaryTotalEqualityDeletes  = "total-equality-deletes"
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
	base, commitUUID, location, seq := c.base, c.uuid, c.location, c.seq
	schema := base.CurrentSchema()
	spec := base.PartitionSpec()

	// The manifest of the added files. Entries leave their sequence numbers
	// unset: readers inherit the manifest's, which the manifest list writer
	// sets to seq (spec: "Sequence Number Inheritance").
	manifestLocation := fmt.Sprintf("%s/metadata/%s-m0.avro", location, commitUUID)
	entries := make([]iceberg.ManifestEntry, 0, len(in.Added))
	paths := make(map[string]struct{}, len(in.Added))
	partitions := make(map[int32]struct{})
	var addedRecords, addedSize int64
	snapshotID := in.SnapshotID
	for _, f := range in.Added {
		if _, dup := paths[f.Path]; dup {
			return nil, fmt.Errorf("icebergmeta: append: data file %s added twice", f.Path)
		}
		paths[f.Path] = struct{}{}
		df, err := dataFile(spec, f)
		if err != nil {
			return nil, fmt.Errorf("icebergmeta: append: data file %s: %w", f.Path, err)
		}
		entries = append(entries, iceberg.NewManifestEntry(iceberg.EntryStatusADDED, &snapshotID, nil, nil, df))
		partitions[f.Partition] = struct{}{}
		addedRecords += f.Stats.RecordCount
		addedSize += f.FileSize
	}
	manifest, manifestFile, err := writeManifest(manifestLocation, spec, schema, snapshotID, entries)
	if err != nil {
		return nil, fmt.Errorf("icebergmeta: append: write manifest: %w", err)
	}

	// The manifest list: the new manifest first (as Java's fast append
	// does), then every manifest of the parent snapshot as it was listed.
	manifests := []iceberg.ManifestFile{manifest}
	parent := base.CurrentSnapshot()
	var parentID *int64
	var previousSummary iceberg.Properties
	if parent != nil {
		id := parent.SnapshotID
		parentID = &id
		if parent.Summary != nil {
			previousSummary = parent.Summary.Properties
		}
		if parent.ManifestList == "" {
			return nil, fmt.Errorf("icebergmeta: append: parent snapshot %d has no manifest list", parent.SnapshotID)
		}
		if in.Read == nil {
			return nil, fmt.Errorf("icebergmeta: append: nil Read with a parent snapshot")
		}
		content, err := in.Read(ctx, parent.ManifestList)
		if err != nil {
			return nil, fmt.Errorf("icebergmeta: append: read manifest list %s: %w", parent.ManifestList, err)
		}
		parentManifests, err := iceberg.ReadManifestList(bytes.NewReader(content))
		if err != nil {
			return nil, fmt.Errorf("icebergmeta: append: parse manifest list %s: %w", parent.ManifestList, err)
		}
		manifests = append(manifests, liveManifests(parentManifests)...)
	}
	var merged *OutputFile
	if !in.NoMerge {
		mergedLocation := fmt.Sprintf("%s/metadata/%s-m1.avro", location, commitUUID)
		if manifests, merged, err = mergeManifests(ctx, in.Read, base, manifests, snapshotID, mergedLocation); err != nil {
			return nil, fmt.Errorf("icebergmeta: append: %w", err)
		}
	}
	manifestListLocation := fmt.Sprintf("%s/metadata/snap-%d-1-%s.avro", location, snapshotID, commitUUID)
	list, err := writeManifestList(manifestListLocation, snapshotID, parentID, seq, manifests)
	if err != nil {
		return nil, fmt.Errorf("icebergmeta: append: write manifest list: %w", err)
	}

	files := []OutputFile{*manifestFile}
	if merged != nil {
		files = append(files, *merged)
	}
	files = append(files, *list)

	summary := appendSummary(len(in.Added), addedRecords, addedSize, len(partitions), previousSummary)
	for k, v := range in.Summary {
		summary.Properties[k] = v
	}
	res, err := c.finish(table.Snapshot{
		SnapshotID:       snapshotID,
		ParentSnapshotID: parentID,
		ManifestList:     manifestListLocation,
		Summary:          &summary,
	}, manifests, files)
	if err != nil {
		return nil, fmt.Errorf("icebergmeta: append: %w", err)
	}
	return res, nil
}

// liveManifests returns the manifests of a parent snapshot that list a
// live data file. A manifest of only DELETED entries recorded its
// snapshot's removals; later snapshots drop it from their list, as Java's
// snapshot producers do, so replacing files (every writer round that
// replaces tail files) does not grow the list.
func liveManifests(ms []iceberg.ManifestFile) []iceberg.ManifestFile {
	out := make([]iceberg.ManifestFile, 0, len(ms))
	for _, m := range ms {
		if m.ManifestContent() == iceberg.ManifestContentData && !m.HasAddedFiles() && !m.HasExistingFiles() {
			continue
		}
		out = append(out, m)
	}
	return out
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
	s := f.Stats
	if s.ColumnSizes != nil {
		b.ColumnSizes(s.ColumnSizes)
	}
	if s.ValueCounts != nil {
		b.ValueCounts(s.ValueCounts)
	}
	if s.NullValueCounts != nil {
		b.NullValueCounts(s.NullValueCounts)
	}
	if s.NaNValueCounts != nil {
		b.NaNValueCounts(s.NaNValueCounts)
	}
	if s.LowerBounds != nil {
		b.LowerBoundValues(s.LowerBounds)
	}
	if s.UpperBounds != nil {
		b.UpperBoundValues(s.UpperBounds)
	}
	if s.SplitOffsets != nil {
		b.SplitOffsets(s.SplitOffsets)
	}

	return b.Build(), nil
}

// appendSummary is the summary of an append (no file removed): what it adds,
// and the totals, which are the parent's plus the added (all zero for the
// first snapshot; a total the parent lacks counts from zero, as in
// iceberg-go).
func appendSummary(files int, records, size int64, changedPartitions int, previous iceberg.Properties) table.Summary {
	props := iceberg.Properties{
		summaryAddedDataFiles:        strconv.Itoa(files),
		summaryAddedRecords:          strconv.FormatInt(records, 10),
		summaryAddedFilesSize:        strconv.FormatInt(size, 10),
		summaryChangedPartitionCount: strconv.Itoa(changedPartitions),
	}
	total := func(key string, added int64) {
		props[key] = strconv.FormatInt(previous.GetInt64(key, 0)+added, 10)
	}
	total(summaryTotalDataFiles, int64(files))
	total(summaryTotalRecords, records)
	total(summaryTotalFilesSize, size)
	total(summaryTotalDeleteFiles, 0)
	total(summaryTotalPositionDeletes, 0)
	total(summaryTotalEqualityDeletes, 0)

	return table.Summary{Operation: table.OpAppend, Properties: props}
}

// marshalMetadata is json.Marshal(md) without its last pass: the metadata
// types' MarshalJSON already writes compact, HTML-escaped JSON (with
// encoding/json), which json.Marshal would copy and validate once more —
// a pass over the whole file on every commit, a sizeable part of a
// commit's CPU with a long history.
func marshalMetadata(md table.Metadata) ([]byte, error) {
	if m, ok := md.(json.Marshaler); ok {
		return m.MarshalJSON()
	}
	return json.Marshal(md)
}

// metadataVersion is NNNNN of ".../metadata/<NNNNN>-<…>.metadata.json".
func metadataVersion(location string) (int, error) {
	name := path.Base(location)
	digits, _, ok := strings.Cut(name, "-")
	v, err := strconv.Atoi(digits)
	if !ok || err != nil || v < 0 || !strings.HasSuffix(name, ".metadata.json") {
		return 0, fmt.Errorf("icebergmeta: metadata location %q is not <NNNNN>-<uuid>.metadata.json", location)
	}

	return v, nil
}

// commit is what a commit (Append, Rewrite) derives from the current
// metadata before it writes anything.
type commit struct {
	base         table.Metadata
	baseLocation string
	version      int       // NNNNN of the current metadata file
	uuid         uuid.UUID // names the commit's files
	location     string    // the table's location, no trailing slash
	seq          int64     // the new snapshot's sequence number
	timestampMs  int64     // the new snapshot's timestamp
}

// openCommit checks a commit's input and parses the current metadata
// (unless parsed holds it already). Errors name op ("append", "rewrite"): a
// snapshot id that is not positive or already in the table, a zero now, a
// location without a version, or metadata that does not parse or is not
// format version 2.
func openCommit(op, metadataLocation string, metadata []byte, parsed table.Metadata, snapshotID int64, now time.Time, id uuid.UUID) (*commit, error) {
	if snapshotID <= 0 {
		return nil, fmt.Errorf("icebergmeta: %s: snapshot id %d is not positive", op, snapshotID)
	}
	if now.IsZero() {
		return nil, fmt.Errorf("icebergmeta: %s: zero Now", op)
	}
	version, err := metadataVersion(metadataLocation)
	if err != nil {
		return nil, err
	}
	base := parsed
	if base == nil {
		if base, err = table.ParseMetadataBytes(metadata); err != nil {
			return nil, fmt.Errorf("icebergmeta: %s: parse metadata %s: %w", op, metadataLocation, err)
		}
	}
	if base.Version() != FormatVersion {
		return nil, fmt.Errorf("icebergmeta: %s: %s has format version %d, want %d",
			op, metadataLocation, base.Version(), FormatVersion)
	}
	if base.SnapshotByID(snapshotID) != nil {
		return nil, fmt.Errorf("icebergmeta: %s: snapshot id %d already in the table", op, snapshotID)
	}
	if id == uuid.Nil {
		id = uuid.New()
	}
	return &commit{base: base, baseLocation: metadataLocation, version: version, uuid: id,
		location: strings.TrimRight(base.Location(), "/"), seq: base.LastSequenceNumber() + 1,
		// Timestamps must not go back (iceberg-go rejects more than a
		// minute back); a writer on a node with a slow clock keeps the last.
		timestampMs: max(now.UnixMilli(), base.LastUpdatedMillis())}, nil
}

// finish adds snap (with the commit's sequence number, timestamp and the
// current schema) to the base as the head of branch main, expires the
// snapshots past their age (expiredSnapshots, measured at the snapshot's
// timestamp), and returns the commit: the next metadata JSON (Iceberg spec:
// snapshots, refs, snapshot-log, metadata-log), named by the commit's
// UUID, with the snapshot's manifests and the files to store.
func (c *commit) finish(snap table.Snapshot, manifests []iceberg.ManifestFile, files []OutputFile) (*CommitResult, error) {
	base := c.base
	schemaID := base.CurrentSchema().ID
	snap.SchemaID = &schemaID
	snap.SequenceNumber, snap.TimestampMs = c.seq, c.timestampMs
	b, err := table.MetadataBuilderFromBase(base, c.baseLocation)
	if err != nil {
		return nil, err
	}
	if err := b.AddSnapshot(&snap); err != nil {
		return nil, fmt.Errorf("add snapshot: %w", err)
	}
	if err := b.SetSnapshotRef(table.MainBranch, snap.SnapshotID, table.BranchRef); err != nil {
		return nil, fmt.Errorf("set branch main: %w", err)
	}
	expired := expiredSnapshots(base, &snap, time.UnixMilli(snap.TimestampMs))
	if len(expired) > 0 {
		if err := b.RemoveSnapshots(expired, false); err != nil {
			return nil, fmt.Errorf("expire snapshots: %w", err)
		}
	}
	md, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("build metadata: %w", err)
	}
	metadataJSON, err := marshalMetadata(md)
	if err != nil {
		return nil, fmt.Errorf("encode metadata: %w", err)
	}
	ms := make([]string, len(manifests))
	for i, m := range manifests {
		ms[i] = m.FilePath()
	}
	return &CommitResult{
		MetadataLocation: metadataFileLocation(c.location, c.version+1, c.uuid),
		Metadata:         metadataJSON,
		SnapshotID:       snap.SnapshotID,
		SequenceNumber:   snap.SequenceNumber,
		ManifestList:     snap.ManifestList,
		Manifests:        ms,
		Expired:          expired,
		Files:            files,
		Parsed:           md,
	}, nil
}
