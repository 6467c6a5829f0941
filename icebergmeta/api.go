// Package icebergmeta builds Iceberg table metadata for Mink's tables with
// apache/iceberg-go: the metadata JSON of a new table, and for each commit
// the manifest, the manifest list and the next metadata JSON (Iceberg spec,
// format version 2). It does no I/O of its own: the caller stores what it
// returns (in Postgres) and passes a reader for files it stored before.
package icebergmeta

import (
	"context"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/google/uuid"

	"github.com/minkhq/mink/datafile"
)

// PartitionFieldID is the id of the table's only partition field, identity
// on _kafka.partition (design §4.2).
const PartitionFieldID = 1000

// FormatVersion is the Iceberg table format version Mink writes.
const FormatVersion = 2

// NewTable returns the metadata JSON of a new, empty table at location
// (for example "s3://mink/demo/earthquakes"), partitioned by identity on
// _kafka.partition, and the location its metadata file should be stored at
// ("<location>/metadata/00000-<uuid>.metadata.json").
func NewTable(schema *iceberg.Schema, location string, tableUUID uuid.UUID, props map[string]string) (metadataLocation string, metadataJSON []byte, err error) {
	panic("TODO")
}

// AddedFile is a data file to append in a commit.
type AddedFile struct {
	// Path is the file's full location (s3://…).
	Path      string
	Partition int32
	FileSize  int64
	Stats     datafile.Stats
}

// ReadFunc returns the content of a file stored by an earlier commit, by its
// full location.
type ReadFunc func(ctx context.Context, location string) ([]byte, error)

// AppendInput is one append commit.
type AppendInput struct {
	// Metadata is the current metadata JSON; MetadataLocation its location.
	Metadata         []byte
	MetadataLocation string
	Added            []AddedFile
	// SnapshotID is the new snapshot's id (positive, unused in the table).
	SnapshotID int64
	// Now stamps the snapshot and the metadata (milliseconds precision).
	Now time.Time
	// Read fetches the parent snapshot's manifest list.
	Read ReadFunc
}

// OutputFile is a file the caller must store at Location.
type OutputFile struct {
	Location string
	Content  []byte
}

// CommitResult is what a commit produced.
type CommitResult struct {
	MetadataLocation string
	Metadata         []byte
	SnapshotID       int64
	SequenceNumber   int64
	ManifestList     string
	// Files holds the new manifest(s) and the manifest list, to be stored
	// together with the metadata file in the commit's transaction.
	Files []OutputFile
}

// Append makes a new snapshot (operation append) whose manifest list holds
// the parent's manifests plus one new manifest with the added files.
func Append(ctx context.Context, in AppendInput) (*CommitResult, error) {
	panic("TODO")
}
