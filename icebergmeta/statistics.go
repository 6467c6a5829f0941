package icebergmeta

import (
	"fmt"
	"strings"

	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
)

// StatisticsInput registers a statistics file in a table's metadata.
type StatisticsInput struct {
	// Metadata and MetadataLocation are the current metadata file, as in
	// AppendInput; Parsed, when not nil, is Metadata parsed (only read).
	Metadata         []byte
	MetadataLocation string
	Parsed           table.Metadata
	// File is the statistics file (Iceberg spec, "Table Statistics"): its
	// snapshot must be in the metadata. It replaces every statistics file
	// the metadata lists (see SetStatistics).
	File table.StatisticsFile
	// CommitUUID names the new metadata file; zero means a random one.
	CommitUUID uuid.UUID
}

// MetadataUpdate is a new metadata file that adds no snapshot.
type MetadataUpdate struct {
	MetadataLocation string
	Metadata         []byte
	Parsed           table.Metadata
	// Expired are the snapshots it removed (ExpireSnapshots), oldest
	// first; the files only they referenced are the caller's to collect.
	Expired []int64
}

// ErrSnapshotGone is returned by SetStatistics when the statistics file's
// snapshot is no longer in the metadata (it expired meanwhile).
var ErrSnapshotGone = fmt.Errorf("icebergmeta: statistics: snapshot not in the metadata")

// SetStatistics returns the next metadata file of in: the same snapshots and
// refs, with in.File the only entry of "statistics" (iceberg-go's
// MetadataBuilder), named "<location>/metadata/<NNNNN+1>-<uuid>.metadata.json"
// like a commit's. Only the newest file is listed: Trino takes the
// statistics of the nearest ancestor of the snapshot it reads that has any,
// older Spark releases the first listed, newer ones only the exact snapshot's; one
// entry serves them all as well as several would, and keeps the metadata
// small.
func SetStatistics(in StatisticsInput) (*MetadataUpdate, error) {
	version, base, err := parseBase("statistics", in.MetadataLocation, in.Metadata, in.Parsed)
	if err != nil {
		return nil, err
	}
	if base.SnapshotByID(in.File.SnapshotID) == nil {
		return nil, fmt.Errorf("%w: %d", ErrSnapshotGone, in.File.SnapshotID)
	}
	b, err := table.MetadataBuilderFromBase(base, in.MetadataLocation)
	if err != nil {
		return nil, err
	}
	for sf := range base.Statistics() {
		if sf.SnapshotID != in.File.SnapshotID {
			if err := b.RemoveStatistics(sf.SnapshotID); err != nil {
				return nil, fmt.Errorf("icebergmeta: statistics: %w", err)
			}
		}
	}
	if err := b.SetStatistics(in.File); err != nil {
		return nil, fmt.Errorf("icebergmeta: statistics: %w", err)
	}
	return nextMetadata(b, base, version, in.CommitUUID, "statistics")
}

// StatisticsLocation is where the Puffin statistics file of snapshotID is
// stored: "<location>/metadata/<snapshot id>-<uuid>.stats.puffin" (Java's
// statistics files are "<snapshot id>-<uuid>.stats").
func StatisticsLocation(location string, snapshotID int64, id uuid.UUID) string {
	return fmt.Sprintf("%s/metadata/%d-%s.stats.puffin", strings.TrimRight(location, "/"), snapshotID, id)
}
