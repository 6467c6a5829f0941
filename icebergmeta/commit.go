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

// A commit (Append, Rewrite) runs in steps, the way cluster's Plan and its
// apply loop do: openCommit checks the input against the current metadata;
// the parent's manifests are read (ReadFunc); pure steps decide what the
// new snapshot holds (addedEntries, planRewrite, smallManifests,
// fileChanges.summary, expiredSnapshots); the write steps encode the
// manifests (writeAppend, writeRewrite, mergeManifests) and finish the
// manifest list and the next metadata JSON. Nothing here stores a file:
// the caller stores CommitResult.Files.

// commit is what a commit derives from the current metadata before it
// writes anything.
type commit struct {
	base         table.Metadata
	baseLocation string
	version      int               // NNNNN of the current metadata file
	uuid         uuid.UUID         // names the commit's files
	location     string            // the table's location, no trailing slash
	snapshotID   int64             // the new snapshot's id
	seq          int64             // the new snapshot's sequence number
	timestampMs  int64             // the new snapshot's timestamp
	schemas      []*iceberg.Schema // schema versions to add (AppendInput.Schemas)
	expire       []int64           // snapshots to expire besides the policy's (AppendInput.Expire)
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
	// Timestamps must not go back (iceberg-go rejects more than a minute
	// back); a writer on a node with a slow clock keeps the last. They
	// also strictly increase along main, so that `FOR TIMESTAMP AS OF`
	// (the newest snapshot-log entry at or before T) is never a tie.
	ts := max(now.UnixMilli(), base.LastUpdatedMillis())
	if cur := base.CurrentSnapshot(); cur != nil {
		ts = max(ts, cur.TimestampMs+1)
	}
	return &commit{base: base, baseLocation: metadataLocation, version: version, uuid: id,
		location: strings.TrimRight(base.Location(), "/"), snapshotID: snapshotID, seq: base.LastSequenceNumber() + 1,
		timestampMs: ts}, nil
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

// parseBase returns the version number of the metadata file at location
// (metadataVersion) and its metadata: parsed, unless parsed is not nil
// (callers that hold it already). op names the update in errors.
func parseBase(op, location string, metadata []byte, parsed table.Metadata) (int, table.Metadata, error) {
	version, err := metadataVersion(location)
	if err != nil {
		return 0, nil, err
	}
	if parsed != nil {
		return version, parsed, nil
	}
	base, err := table.ParseMetadataBytes(metadata)
	if err != nil {
		return 0, nil, fmt.Errorf("icebergmeta: %s: parse metadata %s: %w", op, location, err)
	}
	return version, base, nil
}

// checkParent returns an error naming op unless parent's manifests can be
// read: it has a manifest list and read is not nil.
func checkParent(op string, parent *table.Snapshot, read ReadFunc) error {
	if parent.ManifestList == "" {
		return fmt.Errorf("icebergmeta: %s: parent snapshot %d has no manifest list", op, parent.SnapshotID)
	}
	if read == nil {
		return fmt.Errorf("icebergmeta: %s: nil Read with a parent snapshot", op)
	}
	return nil
}

// manifestLocation is the location of the commit's manifest number n:
// "<location>/metadata/<uuid>-m<n>.avro" (m0 holds the added files).
func (c *commit) manifestLocation(n int) string {
	return fmt.Sprintf("%s/metadata/%s-m%d.avro", c.location, c.uuid, n)
}

// parentManifests returns the live manifests (liveManifests) of the
// manifest list of parent, in list order.
func parentManifests(ctx context.Context, read ReadFunc, parent *table.Snapshot) ([]iceberg.ManifestFile, error) {
	content, err := read(ctx, parent.ManifestList)
	if err != nil {
		return nil, fmt.Errorf("read manifest list %s: %w", parent.ManifestList, err)
	}
	ms, err := iceberg.ReadManifestList(bytes.NewReader(content))
	if err != nil {
		return nil, fmt.Errorf("parse manifest list %s: %w", parent.ManifestList, err)
	}
	return liveManifests(ms), nil
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

// manifestEntries returns the live entries (ADDED and EXISTING) of m.
func manifestEntries(ctx context.Context, read ReadFunc, m iceberg.ManifestFile) ([]iceberg.ManifestEntry, error) {
	content, err := read(ctx, m.FilePath())
	if err != nil {
		return nil, fmt.Errorf("read manifest %s: %w", m.FilePath(), err)
	}
	es, err := iceberg.ReadManifest(m, bytes.NewReader(content), true)
	if err != nil {
		return nil, fmt.Errorf("parse manifest %s: %w", m.FilePath(), err)
	}
	return es, nil
}

// finish writes the manifest list of manifests, adds the snapshot of it
// (with parentID, summary, the commit's sequence number, timestamp and the
// current schema) to the base as the head of branch main, expires the
// snapshots the table's properties and c.expire name (expiredSnapshots,
// measured at the snapshot's timestamp; the snapshot-log keeps every
// retained snapshot, retainedLog), and returns the commit: the next metadata JSON (Iceberg spec:
// snapshots, refs, snapshot-log, metadata-log), named by the commit's
// UUID, with the snapshot's manifests and the files to store (files, then
// the manifest list).
func (c *commit) finish(parentID *int64, summary table.Summary, manifests []iceberg.ManifestFile, files []OutputFile) (*CommitResult, error) {
	listLocation := fmt.Sprintf("%s/metadata/snap-%d-1-%s.avro", c.location, c.snapshotID, c.uuid)
	list, err := writeManifestList(listLocation, c.snapshotID, parentID, c.seq, manifests)
	if err != nil {
		return nil, fmt.Errorf("write manifest list: %w", err)
	}
	files = append(files, *list)

	base := c.base
	schemaID := base.CurrentSchema().ID
	for _, sc := range c.schemas {
		if sc.ID > schemaID {
			schemaID = sc.ID
		}
	}
	snap := table.Snapshot{
		SnapshotID:       c.snapshotID,
		ParentSnapshotID: parentID,
		SequenceNumber:   c.seq,
		TimestampMs:      c.timestampMs,
		ManifestList:     listLocation,
		Summary:          &summary,
		SchemaID:         &schemaID,
	}
	expired := expiredSnapshots(base, &snap, time.UnixMilli(snap.TimestampMs), c.expire)
	from := base
	if len(expired) > 0 {
		from = retainedLog(base, expired)
	}
	b, err := table.MetadataBuilderFromBase(from, c.baseLocation)
	if err != nil {
		return nil, err
	}
	if err := addSchemas(b, base, c.schemas); err != nil {
		return nil, err
	}
	if err := b.AddSnapshot(&snap); err != nil {
		return nil, fmt.Errorf("add snapshot: %w", err)
	}
	if err := b.SetSnapshotRef(table.MainBranch, snap.SnapshotID, table.BranchRef); err != nil {
		return nil, fmt.Errorf("set branch main: %w", err)
	}
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
		TimestampMs:      snap.TimestampMs,
		TotalRecords:     summary.Properties.GetInt64(summaryTotalRecords, 0),
		ManifestList:     snap.ManifestList,
		Manifests:        ms,
		Expired:          expired,
		Files:            files,
		Parsed:           md,
	}, nil
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

// addSchemas adds the schema versions the base does not list and makes the
// newest current. iceberg-go numbers an added schema max+1 (or reuses an
// equal one's id), so each must be the next id: versions are consecutive
// and each differs from the one before.
func addSchemas(b *table.MetadataBuilder, base table.Metadata, schemas []*iceberg.Schema) error {
	have := make(map[int]bool, len(base.Schemas()))
	for _, sc := range base.Schemas() {
		have[sc.ID] = true
	}
	added := false
	for _, sc := range schemas {
		if have[sc.ID] {
			continue
		}
		// AddSchema sets the id of the schema it is given: pass a copy,
		// the caller's schemas are shared.
		cp := iceberg.NewSchemaWithIdentifiers(sc.ID, sc.IdentifierFieldIDs, sc.Fields()...)
		if err := b.AddSchema(cp); err != nil {
			return fmt.Errorf("add schema %d: %w", sc.ID, err)
		}
		if cp.ID != sc.ID {
			return fmt.Errorf("add schema %d: the metadata numbered it %d", sc.ID, cp.ID)
		}
		added = true
	}
	if added {
		if err := b.SetCurrentSchemaID(-1); err != nil {
			return fmt.Errorf("set current schema: %w", err)
		}
	}
	return nil
}
