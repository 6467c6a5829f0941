// Package icebergmeta builds Iceberg table metadata for Mink's tables with
// apache/iceberg-go: the metadata JSON of a new table, and for each commit
// the manifest, the manifest list and the next metadata JSON (Iceberg spec,
// format version 2). It does no I/O of its own: the caller stores what it
// returns (in Postgres) and passes a reader for files it stored before.
//
// File names follow the Java implementation, so engines and tools that
// inspect a table's metadata directory see familiar names:
//
//	<location>/metadata/00000-<uuid>.metadata.json      NewTable
//	<location>/metadata/<NNNNN>-<uuid>.metadata.json    a commit: previous NNNNN + 1
//	<location>/metadata/<uuid>-m0.avro                  a commit: the manifest of the added files
//	<location>/metadata/<uuid>-m<N>.avro                Append: merged (m1); Rewrite: rewritten (from m1)
//	<location>/metadata/snap-<snapshot id>-1-<uuid>.avro a commit: the manifest list
//	<location>/metadata/<uuid>-t<N>.avro                SetTags: the manifest of its Nth tag's added files
//	<location>/metadata/<uuid>-t<N>-m<M>.avro           SetTags: its Nth tag's rewritten ones (from m1)
//
// where <uuid> is the commit's UUID (AppendInput.CommitUUID) for the files of
// one commit, and a commit is Append, Rewrite or SetTags. Manifests and manifest lists are Avro object container files
// with the "null" codec, which every reader reads (avro.go says why). Avro
// files carry a random sync marker, so the bytes of a manifest or a
// manifest list differ between two runs of the same commit; nothing here
// needs them to be deterministic (they are stored once, served byte-exact
// from Postgres).
package icebergmeta

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/minkhq/mink/datafile"
)

// PartitionFieldID is the id of the table's only partition field, identity
// on _kafka.partition (docs/design.md §4.2).
const PartitionFieldID = 1000

// PartitionFieldName is the name of the partition field (the field of the
// partition tuple in manifests, and the key in snapshot summaries).
const PartitionFieldName = "_kafka_partition"

// PartitionSourceID is the schema field id of _kafka.partition (int), the
// source of the partition field. It is nested in the _kafka struct (field
// id KafkaFieldID), which the Iceberg spec allows for identity transforms
// (a source may sit inside structs, not inside lists or maps).
const PartitionSourceID = 2

// KafkaFieldID is the schema field id of the _kafka struct, the table's
// first column.
const KafkaFieldID = 1

// FormatVersion is the Iceberg table format version Mink writes.
const FormatVersion = 2

// ErrNoFiles is returned by Append when AppendInput.Added is empty: an
// Iceberg append must add at least one data file, so callers skip commits
// that would add nothing.
var ErrNoFiles = errors.New("icebergmeta: append adds no data file")

// ErrInvalidSchema is returned by NewTable and PartitionSpec when the schema
// does not start with Mink's _kafka struct (field id 1) holding partition
// int (field id 2).
var ErrInvalidSchema = errors.New("icebergmeta: schema is not a Mink table schema")

// AddedFile is a data file to append in a commit.
type AddedFile struct {
	// Path is the file's full location (s3://…).
	Path string
	// Partition is the Kafka partition the file's records come from; it
	// becomes the file's partition tuple {PartitionFieldID: Partition}.
	Partition int32
	// FileSize is the file's length in bytes (manifest file_size_in_bytes).
	FileSize int64
	// Stats are the file's record count and column statistics, written to
	// the manifest entry as they are (record_count, column_sizes,
	// value_counts, null_value_counts, nan_value_counts, lower_bounds,
	// upper_bounds, split_offsets).
	Stats datafile.Stats
}

// ReadFunc returns the content of a file stored by an earlier commit, by its
// full location.
type ReadFunc func(ctx context.Context, location string) ([]byte, error)

// AppendInput is one append commit.
type AppendInput struct {
	// Metadata is the current metadata JSON; MetadataLocation its location.
	// MetadataLocation must end in "<NNNNN>-<anything>.metadata.json".
	Metadata         []byte
	MetadataLocation string
	// Parsed, when not nil, is Metadata parsed (table.ParseMetadataBytes):
	// a commit then skips parsing it, most of a commit's CPU for a long
	// history. It is only read.
	Parsed table.Metadata
	// Added are the data files to append, at least one, each path once.
	Added []AddedFile
	// SnapshotID is the new snapshot's id (positive, unused in the table).
	SnapshotID int64
	// Now stamps the snapshot and the metadata (milliseconds precision).
	// Iceberg requires timestamps that do not go back in time: when Now is
	// before the current metadata's last-updated-ms (a writer that moved to
	// a node whose clock is behind), that time is used instead.
	Now time.Time
	// Read fetches the parent snapshot's manifest list.
	Read ReadFunc
	// CommitUUID names the commit's files (see the package doc). Zero means
	// a random one. A retry of a commit whose files were not stored may
	// reuse it.
	CommitUUID uuid.UUID
	// NoMerge skips manifest merging (see mergeManifests) for this commit.
	NoMerge bool
	// Summary holds extra snapshot summary properties (the spec allows
	// any); Mink's own are named "mink.…", e.g. SummaryCommittedBy.
	Summary map[string]string
	// Schemas are table schema versions the metadata does not list yet
	// (ids above its current schema's, consecutive, in order): they are
	// added to "schemas" and the last becomes the current schema (the
	// snapshot's schema-id). Schema evolution, docs/design.md §4.7.
	Schemas []*iceberg.Schema
	// Expire are snapshots the commit expires besides those the table's
	// properties expire: the writer's, whose data fell below Kafka's log
	// start (docs/design.md §4.6). The new snapshot and those of refs
	// other than main are never expired.
	Expire []int64
}

// SummaryCommittedBy is the snapshot summary property that says which
// committer made a snapshot: CommittedByWriter, CommittedByLoad or
// CommittedByRepair.
const SummaryCommittedBy = "mink.committed-by"

// Values of SummaryCommittedBy.
const (
	// CommittedByWriter: the table's writer (indexed data files, replaces,
	// expiry below the log start).
	CommittedByWriter = "writer"
	// CommittedByLoad: a zero-lag table load (tail data files).
	CommittedByLoad = "table-load"
	// CommittedByRepair: `mink table repair` (ranges whose dead letters a
	// newer schema version decodes, docs/design.md §4.7).
	CommittedByRepair = "repair"
)

// OutputFile is a file the caller must store at Location.
type OutputFile struct {
	Location string
	Content  []byte
}

// CommitResult is what a commit produced.
type CommitResult struct {
	// MetadataLocation and Metadata are the new metadata file, to become
	// the table's current one.
	MetadataLocation string
	Metadata         []byte
	// SnapshotID and SequenceNumber identify the new snapshot; the sequence
	// number is the previous last-sequence-number + 1.
	SnapshotID     int64
	SequenceNumber int64
	// TimestampMs is the snapshot's timestamp-ms (Unix milliseconds, its
	// snapshot-log entry's) and TotalRecords its summary's total-records.
	TimestampMs  int64
	TotalRecords int64
	// ManifestList is the location of the snapshot's manifest list (also
	// in Files).
	ManifestList string
	// Manifests are the locations of the manifests the manifest list
	// names (new and carried over), in list order.
	Manifests []string
	// Expired are the ids of the snapshots this commit removed from the
	// metadata (thinning, age, count, Expire; see expiredSnapshots),
	// oldest first; the files only they referenced are the caller's to
	// collect.
	Expired []int64
	// Files holds the new manifest(s) and the manifest list, to be stored
	// together with the metadata file in the commit's transaction.
	Files []OutputFile
	// Parsed is Metadata parsed, for a commit that builds on this one.
	Parsed table.Metadata
}

// NewSnapshotID returns a random positive 63-bit snapshot id. Collisions
// with a table's other snapshots are vanishingly unlikely, and Append
// rejects an id already in the table.
func NewSnapshotID() int64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	if id := int64(binary.BigEndian.Uint64(b[:]) >> 1); id > 0 {
		return id
	}
	return 1
}
