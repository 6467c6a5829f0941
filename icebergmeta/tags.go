package icebergmeta

import (
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
// "Snapshot References", type tag). Consumer-group tags, docs/design.md
// §4.8.
type Tag struct {
	// Name is the ref's name (e.g. "group.billing"); not "main".
	Name string
	// SnapshotID is the new snapshot's id (positive, unused in the table).
	SnapshotID int64
	// Files are every data file the snapshot lists (each path once), all
	// written as ADDED entries of one new manifest; none is allowed.
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
	// CommitUUID names the commit's files; zero means a random one.
	CommitUUID uuid.UUID
}

// TagSnapshot is a snapshot SetTags added.
type TagSnapshot struct {
	Name           string
	SnapshotID     int64
	ParentID       *int64
	SequenceNumber int64
	// TimestampMs is the snapshot's timestamp-ms and TotalRecords its
	// summary's total-records: the rows the tag reads.
	TimestampMs  int64
	TotalRecords int64
	ManifestList string
	Manifests    []string
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
// Errors: a tag named "main" or empty, named twice or in both lists, a
// removed tag that does not exist or is not a tag, a snapshot id that is
// not positive or already in the table, a file listed twice, metadata that
// does not parse.
func SetTags(in TagsInput) (*TagsResult, error) {
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
	if cur := base.CurrentSnapshot(); cur != nil {
		p := cur.SnapshotID
		parentID = &p
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
		var changes fileChanges
		entries, err := addedEntries(base.PartitionSpec(), tg.SnapshotID, tg.Files, nil, &changes)
		if err != nil {
			return nil, fmt.Errorf("icebergmeta: tags: %s: %w", tg.Name, err)
		}
		var manifests []iceberg.ManifestFile
		snap := TagSnapshot{Name: tg.Name, SnapshotID: tg.SnapshotID, ParentID: parentID, SequenceNumber: seq,
			ManifestList: fmt.Sprintf("%s/metadata/snap-%d-1-%s.avro", location, tg.SnapshotID, id)}
		if len(entries) > 0 {
			loc := fmt.Sprintf("%s/metadata/%s-t%d.avro", location, id, i)
			m, f, err := writeManifest(loc, base.PartitionSpec(), base.CurrentSchema(), tg.SnapshotID, entries)
			if err != nil {
				return nil, fmt.Errorf("icebergmeta: tags: %s: write manifest: %w", tg.Name, err)
			}
			manifests = append(manifests, m)
			res.Files = append(res.Files, *f)
			snap.Manifests = []string{loc}
		}
		list, err := writeManifestList(snap.ManifestList, tg.SnapshotID, parentID, seq, manifests)
		if err != nil {
			return nil, fmt.Errorf("icebergmeta: tags: %s: write manifest list: %w", tg.Name, err)
		}
		res.Files = append(res.Files, *list)
		summary := changes.summary(table.OpAppend, nil, tg.Summary)
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
