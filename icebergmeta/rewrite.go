package icebergmeta

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
)

// Summary keys of the files a snapshot removes.
const (
	summaryDeletedDataFiles = "deleted-data-files"
	summaryDeletedRecords   = "deleted-records"
	summaryRemovedFilesSize = "removed-files-size"
)

// RewriteInput is one commit that removes data files and optionally adds
// others (expiry below Kafka's log start, re-indexing after compaction).
type RewriteInput struct {
	// Metadata is the current metadata JSON; MetadataLocation its location
	// ("<NNNNN>-<anything>.metadata.json").
	Metadata         []byte
	MetadataLocation string
	Parsed           table.Metadata
	// Removed are the full locations (s3://…) of data files of the current
	// snapshot to remove, at least one, each once.
	Removed []string
	// Added are data files to add (may be empty), none of them a file of
	// the current snapshot.
	Added []AddedFile
	// Replace makes the snapshot's operation "replace" (Iceberg spec:
	// files added and removed without changing table data), for files that
	// hold the same rows as the ones they replace. Rewrite rejects it
	// when the added and removed record counts differ.
	Replace bool
	// Parsed, SnapshotID, Now, Read, CommitUUID and Summary are as in
	// AppendInput.
	SnapshotID int64
	Now        time.Time
	Read       ReadFunc
	CommitUUID uuid.UUID
	Summary    map[string]string
}

// Rewrite makes a new snapshot of branch main that removes in.Removed and
// adds in.Added: operation "replace" when in.Replace says the added files
// hold the same rows, else "delete" when it adds nothing and "overwrite"
// otherwise.
//
// Its manifest list holds, in order: a new manifest of the added files (if
// any; entries ADDED, inheriting the new sequence number), then the
// parent's manifests in their order, where each manifest that holds a
// removed file is replaced by a rewritten one (removed entries DELETED with
// the new snapshot id, the others EXISTING; both keep their data and file
// sequence numbers, EXISTING ones also their snapshot id) and the others are
// carried over as they were. Rewritten manifests are named
// "<uuid>-m<N>.avro" with N from 1 (m0 is the added manifest). A manifest
// whose every live entry is removed is still written (all DELETED), as Java
// does, so the snapshot records what it deleted.
//
// The summary carries added-* (when adding), deleted-data-files,
// deleted-records, removed-files-size, changed-partition-count and the
// totals (the parent's minus the removed plus the added).
//
// Errors: a wrapped error when in.Removed is empty, a removed file is not
// in the current snapshot, an added file already is, a replace changes the
// record count, or as for Append.
func Rewrite(ctx context.Context, in RewriteInput) (*CommitResult, error) {
	if len(in.Removed) == 0 {
		return nil, fmt.Errorf("icebergmeta: rewrite: no file removed")
	}
	if in.Read == nil {
		return nil, fmt.Errorf("icebergmeta: rewrite: nil Read")
	}
	c, err := openCommit("rewrite", in.MetadataLocation, in.Metadata, in.Parsed, in.SnapshotID, in.Now, in.CommitUUID)
	if err != nil {
		return nil, err
	}
	base, commitUUID, location, seq := c.base, c.uuid, c.location, c.seq
	parent := base.CurrentSnapshot()
	if parent == nil || parent.ManifestList == "" {
		return nil, fmt.Errorf("icebergmeta: rewrite: the table has no current snapshot")
	}
	removed := make(map[string]bool, len(in.Removed))
	for _, p := range in.Removed {
		if _, dup := removed[p]; dup {
			return nil, fmt.Errorf("icebergmeta: rewrite: data file %s removed twice", p)
		}
		removed[p] = false
	}

	schema := base.CurrentSchema()
	spec := base.PartitionSpec()
	snapshotID := in.SnapshotID
	parentID := parent.SnapshotID

	content, err := in.Read(ctx, parent.ManifestList)
	if err != nil {
		return nil, fmt.Errorf("icebergmeta: rewrite: read manifest list %s: %w", parent.ManifestList, err)
	}
	parentManifests, err := iceberg.ReadManifestList(bytes.NewReader(content))
	if err != nil {
		return nil, fmt.Errorf("icebergmeta: rewrite: parse manifest list %s: %w", parent.ManifestList, err)
	}

	var files []OutputFile
	var manifests []iceberg.ManifestFile
	partitions := make(map[int32]struct{})
	live := make(map[string]struct{})
	var deletedFiles, deletedRecords, deletedSize int64
	rewritten := 0
	for _, m := range liveManifests(parentManifests) {
		if m.ManifestContent() != iceberg.ManifestContentData {
			manifests = append(manifests, m)
			continue
		}
		mc, err := in.Read(ctx, m.FilePath())
		if err != nil {
			return nil, fmt.Errorf("icebergmeta: rewrite: read manifest %s: %w", m.FilePath(), err)
		}
		entries, err := iceberg.ReadManifest(m, bytes.NewReader(mc), true)
		if err != nil {
			return nil, fmt.Errorf("icebergmeta: rewrite: parse manifest %s: %w", m.FilePath(), err)
		}
		hit := false
		for _, e := range entries {
			live[e.DataFile().FilePath()] = struct{}{}
			if _, ok := removed[e.DataFile().FilePath()]; ok {
				hit = true
			}
		}
		if !hit {
			manifests = append(manifests, m)
			continue
		}
		out := make([]iceberg.ManifestEntry, 0, len(entries))
		for _, e := range entries {
			df := e.DataFile()
			seqNum, fileSeq := e.SequenceNum(), e.FileSequenceNum()
			if _, ok := removed[df.FilePath()]; ok {
				removed[df.FilePath()] = true
				deletedFiles++
				deletedRecords += df.Count()
				deletedSize += df.FileSizeBytes()
				if p, ok := df.Partition()[PartitionFieldID].(int32); ok {
					partitions[p] = struct{}{}
				}
				out = append(out, iceberg.NewManifestEntry(iceberg.EntryStatusDELETED, &snapshotID, &seqNum, fileSeq, df))
				continue
			}
			sid := e.SnapshotID()
			out = append(out, iceberg.NewManifestEntry(iceberg.EntryStatusEXISTING, &sid, &seqNum, fileSeq, df))
		}
		rewritten++
		loc := fmt.Sprintf("%s/metadata/%s-m%d.avro", location, commitUUID, rewritten)
		nm, file, err := writeManifest(loc, spec, schema, snapshotID, out)
		if err != nil {
			return nil, fmt.Errorf("icebergmeta: rewrite: write manifest: %w", err)
		}
		files = append(files, *file)
		manifests = append(manifests, nm)
	}
	for p, found := range removed {
		if !found {
			return nil, fmt.Errorf("icebergmeta: rewrite: data file %s is not in snapshot %d", p, parentID)
		}
	}

	var addedRecords, addedSize int64
	if len(in.Added) > 0 {
		manifestLocation := fmt.Sprintf("%s/metadata/%s-m0.avro", location, commitUUID)
		entries := make([]iceberg.ManifestEntry, 0, len(in.Added))
		paths := make(map[string]struct{}, len(in.Added))
		for _, f := range in.Added {
			if _, dup := paths[f.Path]; dup {
				return nil, fmt.Errorf("icebergmeta: rewrite: data file %s added twice", f.Path)
			}
			paths[f.Path] = struct{}{}
			if _, ok := live[f.Path]; ok {
				if _, rm := removed[f.Path]; !rm {
					return nil, fmt.Errorf("icebergmeta: rewrite: data file %s is already in the table", f.Path)
				}
			}
			df, err := dataFile(spec, f)
			if err != nil {
				return nil, fmt.Errorf("icebergmeta: rewrite: data file %s: %w", f.Path, err)
			}
			entries = append(entries, iceberg.NewManifestEntry(iceberg.EntryStatusADDED, &snapshotID, nil, nil, df))
			partitions[f.Partition] = struct{}{}
			addedRecords += f.Stats.RecordCount
			addedSize += f.FileSize
		}
		m, file, err := writeManifest(manifestLocation, spec, schema, snapshotID, entries)
		if err != nil {
			return nil, fmt.Errorf("icebergmeta: rewrite: write manifest: %w", err)
		}
		files = append([]OutputFile{*file}, files...)
		manifests = append([]iceberg.ManifestFile{m}, manifests...)
	}

	manifestListLocation := fmt.Sprintf("%s/metadata/snap-%d-1-%s.avro", location, snapshotID, commitUUID)
	list, err := writeManifestList(manifestListLocation, snapshotID, &parentID, seq, manifests)
	if err != nil {
		return nil, fmt.Errorf("icebergmeta: rewrite: write manifest list: %w", err)
	}
	files = append(files, *list)

	var previous iceberg.Properties
	if parent.Summary != nil {
		previous = parent.Summary.Properties
	}
	props := iceberg.Properties{
		summaryDeletedDataFiles:      strconv.FormatInt(deletedFiles, 10),
		summaryDeletedRecords:        strconv.FormatInt(deletedRecords, 10),
		summaryRemovedFilesSize:      strconv.FormatInt(deletedSize, 10),
		summaryChangedPartitionCount: strconv.Itoa(len(partitions)),
	}
	op := table.OpDelete
	switch {
	case in.Replace:
		if addedRecords != deletedRecords {
			return nil, fmt.Errorf("icebergmeta: rewrite: a replace adds %d records and removes %d", addedRecords, deletedRecords)
		}
		op = table.OpReplace
	case len(in.Added) > 0:
		op = table.OpOverwrite
	}
	if len(in.Added) > 0 {
		props[summaryAddedDataFiles] = strconv.Itoa(len(in.Added))
		props[summaryAddedRecords] = strconv.FormatInt(addedRecords, 10)
		props[summaryAddedFilesSize] = strconv.FormatInt(addedSize, 10)
	}
	total := func(key string, delta int64) {
		props[key] = strconv.FormatInt(max(previous.GetInt64(key, 0)+delta, 0), 10)
	}
	total(summaryTotalDataFiles, int64(len(in.Added))-deletedFiles)
	total(summaryTotalRecords, addedRecords-deletedRecords)
	total(summaryTotalFilesSize, addedSize-deletedSize)
	total(summaryTotalDeleteFiles, 0)
	total(summaryTotalPositionDeletes, 0)
	total(summaryTotalEqualityDeletes, 0)
	for k, v := range in.Summary {
		props[k] = v
	}
	summary := table.Summary{Operation: op, Properties: props}

	res, err := c.finish(table.Snapshot{
		SnapshotID:       snapshotID,
		ParentSnapshotID: &parentID,
		ManifestList:     manifestListLocation,
		Summary:          &summary,
	}, manifests, files)
	if err != nil {
		return nil, fmt.Errorf("icebergmeta: rewrite: %w", err)
	}
	return res, nil
}
