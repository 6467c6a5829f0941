package icebergmeta

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
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
	Schemas    []*iceberg.Schema
	// Expire is as in AppendInput.
	Expire []int64
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
	c.schemas, c.expire = in.Schemas, in.Expire
	parent := c.base.CurrentSnapshot()
	if parent == nil || parent.ManifestList == "" {
		return nil, fmt.Errorf("icebergmeta: rewrite: the table has no current snapshot")
	}
	removed := make(map[string]struct{}, len(in.Removed))
	for _, p := range in.Removed {
		if _, dup := removed[p]; dup {
			return nil, fmt.Errorf("icebergmeta: rewrite: data file %s removed twice", p)
		}
		removed[p] = struct{}{}
	}

	parents, err := readParentManifests(ctx, in.Read, parent)
	if err != nil {
		return nil, fmt.Errorf("icebergmeta: rewrite: %w", err)
	}
	plan, err := planRewrite(c.base.PartitionSpec(), c.snapshotID, parent.SnapshotID, parents, removed, in.Added, in.Replace)
	if err != nil {
		return nil, fmt.Errorf("icebergmeta: rewrite: %w", err)
	}
	parentID := parent.SnapshotID
	res, err := c.writeRewrite(&parentID, plan, plan.changes.summary(plan.op, parentSummary(parent), in.Summary))
	if err != nil {
		return nil, fmt.Errorf("icebergmeta: rewrite: %w", err)
	}
	return res, nil
}

// parentManifest is a manifest of the parent snapshot with its live
// entries (none read for a delete manifest, which a rewrite carries over).
type parentManifest struct {
	file    iceberg.ManifestFile
	entries []iceberg.ManifestEntry
}

// readParentManifests reads the live manifests of parent's manifest list,
// in list order, and the entries of its data manifests.
func readParentManifests(ctx context.Context, read ReadFunc, parent *table.Snapshot) ([]parentManifest, error) {
	ms, err := parentManifests(ctx, read, parent)
	if err != nil {
		return nil, err
	}
	out := make([]parentManifest, len(ms))
	for i, m := range ms {
		out[i].file = m
		if m.ManifestContent() != iceberg.ManifestContentData {
			continue
		}
		if out[i].entries, err = manifestEntries(ctx, read, m); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// rewritePlan is what a Rewrite's snapshot holds, decided from the
// parent's manifests before any file is written.
type rewritePlan struct {
	op table.Operation
	// added are the entries of the manifest of the added files (m0),
	// none when the rewrite only removes.
	added []iceberg.ManifestEntry
	// manifests are the parent's live manifests in list order: each is
	// carried over or rewritten.
	manifests []manifestRewrite
	changes   fileChanges
}

// manifestRewrite is one of the parent's manifests in a rewrite: carried
// over as it is (entries nil), or rewritten with entries when it holds a
// removed file.
type manifestRewrite struct {
	parent  iceberg.ManifestFile
	entries []iceberg.ManifestEntry
}

// planRewrite decides the manifests and the operation of snapshot
// snapshotID that removes the data files removed from the parent snapshot
// parentID, whose manifests are parents, and adds added (see Rewrite).
// A removed entry becomes DELETED by snapshotID, the other entries of its
// manifest EXISTING; both keep their data and file sequence numbers,
// EXISTING ones also their snapshot id.
//
// Errors: a removed file that is not in the parent snapshot; an added
// file given twice or already in the table (and not removed); a replace
// that changes the record count; or as for dataFile.
func planRewrite(spec iceberg.PartitionSpec, snapshotID, parentID int64, parents []parentManifest,
	removed map[string]struct{}, added []AddedFile, replace bool) (*rewritePlan, error) {
	p := &rewritePlan{manifests: make([]manifestRewrite, len(parents))}
	live := make(map[string]struct{})
	found := make(map[string]struct{}, len(removed))
	for i, m := range parents {
		p.manifests[i].parent = m.file
		hit := false
		for _, e := range m.entries {
			path := e.DataFile().FilePath()
			live[path] = struct{}{}
			if _, ok := removed[path]; ok {
				hit = true
			}
		}
		if !hit {
			continue
		}
		entries := make([]iceberg.ManifestEntry, 0, len(m.entries))
		for _, e := range m.entries {
			df := e.DataFile()
			seqNum, fileSeq := e.SequenceNum(), e.FileSequenceNum()
			if _, ok := removed[df.FilePath()]; ok {
				found[df.FilePath()] = struct{}{}
				p.changes.remove(df)
				entries = append(entries, iceberg.NewManifestEntry(iceberg.EntryStatusDELETED, &snapshotID, &seqNum, fileSeq, df))
				continue
			}
			sid := e.SnapshotID()
			entries = append(entries, iceberg.NewManifestEntry(iceberg.EntryStatusEXISTING, &sid, &seqNum, fileSeq, df))
		}
		p.manifests[i].entries = entries
	}
	for path := range removed {
		if _, ok := found[path]; !ok {
			return nil, fmt.Errorf("data file %s is not in snapshot %d", path, parentID)
		}
	}

	if len(added) > 0 {
		inTable := func(path string) bool {
			_, isLive := live[path]
			_, isRemoved := removed[path]
			return isLive && !isRemoved
		}
		var err error
		if p.added, err = addedEntries(spec, snapshotID, added, inTable, &p.changes); err != nil {
			return nil, err
		}
	}

	p.op = table.OpDelete
	switch {
	case replace:
		if p.changes.addedRecords != p.changes.deletedRecords {
			return nil, fmt.Errorf("a replace adds %d records and removes %d", p.changes.addedRecords, p.changes.deletedRecords)
		}
		p.op = table.OpReplace
	case len(added) > 0:
		p.op = table.OpOverwrite
	}
	return p, nil
}

// writeRewrite writes the manifests of p (writeRewriteManifests, named
// m0, m1, …) and finishes the commit.
func (c *commit) writeRewrite(parentID *int64, p *rewritePlan, summary table.Summary) (*CommitResult, error) {
	manifests, files, err := writeRewriteManifests(c.base.PartitionSpec(), c.base.CurrentSchema(), c.snapshotID, p, c.manifestLocation)
	if err != nil {
		return nil, err
	}
	return c.finish(parentID, summary, manifests, files)
}

// writeRewriteManifests writes the manifests of p, snapshot snapshotID's:
// the added one at location(0) and the rewritten ones at location(1),
// location(2), … in list order. It returns the manifests of the list, the
// added one first, then the parent's in their order, each rewritten one in
// its parent's place, and the files written.
func writeRewriteManifests(spec iceberg.PartitionSpec, schema *iceberg.Schema, snapshotID int64, p *rewritePlan,
	location func(n int) string) ([]iceberg.ManifestFile, []OutputFile, error) {
	var files []OutputFile
	var manifests []iceberg.ManifestFile
	if len(p.added) > 0 {
		m, file, err := writeManifest(location(0), spec, schema, snapshotID, p.added)
		if err != nil {
			return nil, nil, fmt.Errorf("write manifest: %w", err)
		}
		files, manifests = append(files, *file), append(manifests, m)
	}
	rewritten := 0
	for _, mr := range p.manifests {
		if mr.entries == nil {
			manifests = append(manifests, mr.parent)
			continue
		}
		rewritten++
		m, file, err := writeManifest(location(rewritten), spec, schema, snapshotID, mr.entries)
		if err != nil {
			return nil, nil, fmt.Errorf("write manifest: %w", err)
		}
		files, manifests = append(files, *file), append(manifests, m)
	}
	return manifests, files, nil
}
