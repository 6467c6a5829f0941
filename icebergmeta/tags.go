package icebergmeta

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
)

// Tag is a tagged snapshot a SetTags commit adds: a snapshot outside
// branch main that lists exactly Files, named by a tag ref (Iceberg spec,
// "Snapshot References", type tag), written as a change against its parent
// (see SetTags). Consumer-group tags, docs/design.md §4.8.
type Tag struct {
	// Name is the ref's name (e.g. "group.billing"); not "main".
	Name string
	// SnapshotID is the new snapshot's id (positive, unused in the table).
	SnapshotID int64
	// Files are every data file the snapshot lists (each path once); none
	// is allowed. A file of the parent snapshot is listed as the parent
	// lists it (its entry there), whatever else is given here.
	Files []AddedFile
	// Summary holds extra snapshot summary properties ("mink.…").
	Summary map[string]string
}

// TagsInput is one SetTags commit.
type TagsInput struct {
	// Metadata, MetadataLocation and Parsed are the current metadata, as
	// in AppendInput.
	Metadata         []byte
	MetadataLocation string
	Parsed           table.Metadata
	// Set are the tags to set or move, Remove the names of tags to drop.
	// A name may not be in both.
	Set    []Tag
	Remove []string
	// Now stamps the new snapshots (not earlier than last-updated-ms).
	Now time.Time
	// Read fetches the manifest list and manifests of main's current
	// snapshot, the new snapshots' parent; needed when there is one.
	Read ReadFunc
	// CommitUUID names the commit's files; zero means a random one.
	CommitUUID uuid.UUID
}

// TagSnapshot is a snapshot SetTags added.
type TagSnapshot struct {
	Name           string
	SnapshotID     int64
	ParentID       *int64
	SequenceNumber int64
	// Operation is the snapshot's operation against its parent: append,
	// delete, overwrite or replace (see SetTags).
	Operation table.Operation
	// TimestampMs is the snapshot's timestamp-ms and TotalRecords its
	// summary's total-records: the rows the tag reads.
	TimestampMs  int64
	TotalRecords int64
	ManifestList string
	// Manifests are the locations of the manifests its manifest list
	// names, in list order: new ones and the parent's carried over.
	Manifests []string
}

// TagsResult is what SetTags produced.
type TagsResult struct {
	MetadataUpdate
	// Snapshots are the added snapshots, in in.Set's order, with
	// sequence numbers last-sequence-number + 1, + 2, ….
	Snapshots []TagSnapshot
	// LastSequenceNumber is the new metadata's last-sequence-number.
	LastSequenceNumber int64
	// Expired are the snapshots removed from the metadata: those only the
	// moved or removed tags named (never one of main's history).
	Expired []int64
	// Files are the manifests and manifest lists to store with the
	// metadata file.
	Files []OutputFile
}

// SetTags returns the next metadata file of in with the tags of in.Set
// pointing at new snapshots and those of in.Remove gone. Each new
// snapshot's parent is main's current snapshot (the one whose content it
// extends or cuts), but main does not move and the snapshot-log does not
// change: the snapshots are reachable by their tags only. A snapshot that a
// moved or removed tag named is removed from the metadata when no other ref
// names it and it is not main's current snapshot or one of its ancestors.
//
// A tag's snapshot is an honest change against its parent, as Rewrite
// writes one (planRewrite), so that incremental readers (an append scan
// from the parent to the tag reads the ADDED entries of append snapshots)
// see only what the tag changes: the parent's files it lists stay in the
// parent's manifests (carried over, or rewritten with their entries
// EXISTING, keeping snapshot id and sequence numbers), the parent's files
// it does not list are DELETED entries of rewritten manifests
// ("<uuid>-t<N>-m<M>.avro", M from 1), and its other files are ADDED
// entries of a new manifest ("<uuid>-t<N>.avro"), N the tag's index in
// in.Set. Its operation is "append" when it only adds, "delete" when it
// only removes, "overwrite" when it does both and "replace" when it lists
// exactly the parent's files (table data unchanged); its summary counts
// the changes from the parent's (the totals are the tag's). Without a
// current snapshot every file is ADDED and the operation is "append".
//
// Errors: a tag named "main" or empty, named twice or in both lists, a
// removed tag that does not exist or is not a tag, a snapshot id that is
// not positive or already in the table, a file listed twice, metadata that
// does not parse, a nil in.Read with a current snapshot, a Read failure.
func SetTags(ctx context.Context, in TagsInput) (*TagsResult, error) {
	version, base, err := parseBase("tags", in.MetadataLocation, in.Metadata, in.Parsed)
	if err != nil {
		return nil, err
	}
	if in.Now.IsZero() {
		return nil, fmt.Errorf("icebergmeta: tags: zero Now")
	}
	names := map[string]bool{}
	for _, n := range append(tagNames(in.Set), in.Remove...) {
		if n == "" || n == table.MainBranch {
			return nil, fmt.Errorf("icebergmeta: tags: invalid tag name %q", n)
		}
		if names[n] {
			return nil, fmt.Errorf("icebergmeta: tags: tag %q given twice", n)
		}
		names[n] = true
	}
	refs := map[string]table.SnapshotRef{}
	for n, r := range base.Refs() {
		refs[n] = r
	}
	for _, n := range in.Remove {
		if r, ok := refs[n]; !ok || r.SnapshotRefType != table.TagRef {
			return nil, fmt.Errorf("icebergmeta: tags: no tag %q to remove", n)
		}
	}
	id := in.CommitUUID
	if id == uuid.Nil {
		id = uuid.New()
	}
	location := strings.TrimRight(base.Location(), "/")
	b, err := table.MetadataBuilderFromBase(base, in.MetadataLocation)
	if err != nil {
		return nil, err
	}
	var parentID *int64
	var parents []parentManifest
	parent := base.CurrentSnapshot()
	if parent != nil && len(in.Set) > 0 {
		p := parent.SnapshotID
		parentID = &p
		if err := checkParent("tags", parent, in.Read); err != nil {
			return nil, err
		}
		if parents, err = readParentManifests(ctx, in.Read, parent); err != nil {
			return nil, fmt.Errorf("icebergmeta: tags: %w", err)
		}
	}
	res := &TagsResult{}
	seq := base.LastSequenceNumber()
	ts := max(in.Now.UnixMilli(), base.LastUpdatedMillis())
	schemaID := base.CurrentSchema().ID
	for i, tg := range in.Set {
		if tg.SnapshotID <= 0 || base.SnapshotByID(tg.SnapshotID) != nil {
			return nil, fmt.Errorf("icebergmeta: tags: snapshot id %d of %s is not positive or already in the table", tg.SnapshotID, tg.Name)
		}
		seq++
		plan, err := planTagSnapshot(base.PartitionSpec(), tg.SnapshotID, parentID, parents, tg.Files)
		if err != nil {
			return nil, fmt.Errorf("icebergmeta: tags: %s: %w", tg.Name, err)
		}
		manifests, files, err := writeRewriteManifests(base.PartitionSpec(), base.CurrentSchema(), tg.SnapshotID, plan,
			func(n int) string {
				if n == 0 {
					return fmt.Sprintf("%s/metadata/%s-t%d.avro", location, id, i)
				}
				return fmt.Sprintf("%s/metadata/%s-t%d-m%d.avro", location, id, i, n)
			})
		if err != nil {
			return nil, fmt.Errorf("icebergmeta: tags: %s: %w", tg.Name, err)
		}
		res.Files = append(res.Files, files...)
		snap := TagSnapshot{Name: tg.Name, SnapshotID: tg.SnapshotID, ParentID: parentID, SequenceNumber: seq, Operation: plan.op,
			ManifestList: fmt.Sprintf("%s/metadata/snap-%d-1-%s.avro", location, tg.SnapshotID, id)}
		for _, m := range manifests {
			snap.Manifests = append(snap.Manifests, m.FilePath())
		}
		list, err := writeManifestList(snap.ManifestList, tg.SnapshotID, parentID, seq, manifests)
		if err != nil {
			return nil, fmt.Errorf("icebergmeta: tags: %s: write manifest list: %w", tg.Name, err)
		}
		res.Files = append(res.Files, *list)
		summary := plan.changes.summary(plan.op, parentSummary(parent), tg.Summary)
		snap.TimestampMs, snap.TotalRecords = ts, summary.Properties.GetInt64(summaryTotalRecords, 0)
		if err := b.AddSnapshot(&table.Snapshot{SnapshotID: tg.SnapshotID, ParentSnapshotID: parentID, SequenceNumber: seq,
			TimestampMs: ts, ManifestList: snap.ManifestList, Summary: &summary, SchemaID: &schemaID}); err != nil {
			return nil, fmt.Errorf("icebergmeta: tags: add snapshot of %s: %w", tg.Name, err)
		}
		if err := b.SetSnapshotRef(tg.Name, tg.SnapshotID, table.TagRef); err != nil {
			return nil, fmt.Errorf("icebergmeta: tags: set %s: %w", tg.Name, err)
		}
		res.Snapshots = append(res.Snapshots, snap)
	}
	for _, n := range in.Remove {
		if err := b.RemoveSnapshotRef(n); err != nil {
			return nil, fmt.Errorf("icebergmeta: tags: remove %s: %w", n, err)
		}
	}
	res.Expired = orphanedTagSnapshots(base, refs, in)
	if len(res.Expired) > 0 {
		if err := b.RemoveSnapshots(res.Expired, false); err != nil {
			return nil, fmt.Errorf("icebergmeta: tags: remove snapshots: %w", err)
		}
	}
	upd, err := nextMetadata(b, base, version, id, "tags")
	if err != nil {
		return nil, err
	}
	res.MetadataUpdate = *upd
	res.LastSequenceNumber = upd.Parsed.LastSequenceNumber()
	return res, nil
}

// planTagSnapshot decides what snapshot snapshotID of a tag that lists
// files holds against its parent parentID (nil for none), whose manifests
// are parents: the parent's files not in files removed, files not in the
// parent added (planRewrite), and the operation that says which (see
// SetTags). Errors: a file listed twice, or as for planRewrite.
func planTagSnapshot(spec iceberg.PartitionSpec, snapshotID int64, parentID *int64, parents []parentManifest,
	files []AddedFile) (*rewritePlan, error) {
	if parentID == nil {
		p := &rewritePlan{op: table.OpAppend}
		var err error
		p.added, err = addedEntries(spec, snapshotID, files, nil, &p.changes)
		return p, err
	}
	listed := make(map[string]struct{}, len(files))
	for _, f := range files {
		if _, dup := listed[f.Path]; dup {
			return nil, fmt.Errorf("data file %s listed twice", f.Path)
		}
		listed[f.Path] = struct{}{}
	}
	inParent := map[string]struct{}{}
	removed := map[string]struct{}{}
	for _, m := range parents {
		for _, e := range m.entries {
			path := e.DataFile().FilePath()
			inParent[path] = struct{}{}
			if _, ok := listed[path]; !ok {
				removed[path] = struct{}{}
			}
		}
	}
	var added []AddedFile
	for _, f := range files {
		if _, ok := inParent[f.Path]; !ok {
			added = append(added, f)
		}
	}
	p, err := planRewrite(spec, snapshotID, *parentID, parents, removed, added, false)
	if err != nil {
		return nil, err
	}
	switch {
	case len(removed) == 0 && len(added) == 0:
		p.op = table.OpReplace
	case len(removed) == 0:
		p.op = table.OpAppend
	case len(added) == 0:
		p.op = table.OpDelete
	default:
		p.op = table.OpOverwrite
	}
	return p, nil
}

func tagNames(tags []Tag) []string {
	out := make([]string, len(tags))
	for i, t := range tags {
		out[i] = t.Name
	}
	return out
}

// orphanedTagSnapshots returns the snapshots the tags in moves or removes
// named that no remaining ref names and that are not in main's history.
func orphanedTagSnapshots(base table.Metadata, refs map[string]table.SnapshotRef, in TagsInput) []int64 {
	left := maps.Clone(refs)
	var old []int64
	for _, n := range append(tagNames(in.Set), in.Remove...) {
		if r, ok := refs[n]; ok {
			old = append(old, r.SnapshotID)
			delete(left, n)
		}
	}
	named := map[int64]bool{}
	for _, r := range left {
		named[r.SnapshotID] = true
	}
	main := map[int64]bool{}
	for s := base.CurrentSnapshot(); s != nil; {
		main[s.SnapshotID] = true
		if s.ParentSnapshotID == nil {
			break
		}
		s = base.SnapshotByID(*s.ParentSnapshotID)
	}
	var out []int64
	for _, id := range old {
		if !named[id] && !main[id] && base.SnapshotByID(id) != nil && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// SetProperties returns the next metadata file of the metadata with set
// set and remove removed from its properties (a key in neither is kept), or
// nil when nothing changes. Errors: a reserved property (format-version,
// uuid, …), metadata that does not parse.
func SetProperties(metadataLocation string, metadata []byte, parsed table.Metadata, set map[string]string, remove []string) (*MetadataUpdate, error) {
	version, err := metadataVersion(metadataLocation)
	if err != nil {
		return nil, err
	}
	base := parsed
	if base == nil {
		if base, err = table.ParseMetadataBytes(metadata); err != nil {
			return nil, fmt.Errorf("icebergmeta: properties: parse metadata %s: %w", metadataLocation, err)
		}
	}
	props := base.Properties()
	changed := map[string]string{}
	for k, v := range set {
		if old, ok := props[k]; !ok || old != v {
			changed[k] = v
		}
	}
	var gone []string
	for _, k := range remove {
		if _, ok := props[k]; ok {
			gone = append(gone, k)
		}
	}
	if len(changed) == 0 && len(gone) == 0 {
		return nil, nil
	}
	b, err := table.MetadataBuilderFromBase(base, metadataLocation)
	if err != nil {
		return nil, err
	}
	if err := b.SetProperties(changed); err != nil {
		return nil, fmt.Errorf("icebergmeta: properties: %w", err)
	}
	if err := b.RemoveProperties(gone); err != nil {
		return nil, fmt.Errorf("icebergmeta: properties: %w", err)
	}
	return nextMetadata(b, base, version, uuid.Nil, "properties")
}
