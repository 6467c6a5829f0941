package icebergmeta

import (
	"cmp"
	"slices"
	"time"

	"github.com/apache/iceberg-go/table"
)

// Table properties of snapshot expiry (Iceberg's ExpireSnapshots; names
// from the Java implementation's TableProperties).
const (
	// PropMaxSnapshotAge is the age in milliseconds past which a snapshot
	// expires.
	PropMaxSnapshotAge = "history.expire.max-snapshot-age-ms"
	// PropMinSnapshotsToKeep is how many of the newest snapshots of branch
	// main never expire, whatever their age.
	PropMinSnapshotsToKeep = "history.expire.min-snapshots-to-keep"
	// PropMaxSnapshots (Mink's own) is how many of the newest snapshots a
	// table keeps at most, whatever their age; 0 means no bound. Every
	// zero-lag table load that finds new records commits a snapshot, so
	// the history grows with the load rate; this bounds the metadata JSON
	// (about 620 bytes a snapshot) and the time a commit takes to rewrite
	// it.
	PropMaxSnapshots = "mink.history.max-snapshots"
)

// Defaults of the expiry properties. Java keeps snapshots 5 days; a Mink
// table commits every few seconds and Kafka itself is the history, so it
// keeps 10 minutes of them: every table load carries the snapshot list.
const (
	DefaultMaxSnapshotAge     = 10 * time.Minute
	DefaultMinSnapshotsToKeep = 1
	// DefaultMaxSnapshots keeps the metadata JSON near 320 KiB and a
	// commit's rewrite of it near 15 ms (measured; docs/design.md §4.6).
	DefaultMaxSnapshots = 500
)

// expiredSnapshots returns the ids of the snapshots of base that a commit
// of snap at now expires, oldest first: those older than
// history.expire.max-snapshot-age-ms (default DefaultMaxSnapshotAge), and
// those past the newest mink.history.max-snapshots (default
// DefaultMaxSnapshots, snap included), except the newest
// history.expire.min-snapshots-to-keep (default 1) of snap's ancestry, snap
// included. Snapshot timestamps and sequence numbers never go back along a
// branch, so what expires is always the oldest part of the history: every
// retained snapshot's ancestry stays unbroken up to the oldest retained one,
// which keeps the ancestry checks of incremental readers working.
func expiredSnapshots(base table.Metadata, snap *table.Snapshot, now time.Time) []int64 {
	props := base.Properties()
	maxAge := time.Duration(props.GetInt64(PropMaxSnapshotAge, DefaultMaxSnapshotAge.Milliseconds())) * time.Millisecond
	minKeep := max(props.GetInt(PropMinSnapshotsToKeep, DefaultMinSnapshotsToKeep), 1)
	maxCount := props.GetInt(PropMaxSnapshots, DefaultMaxSnapshots)
	keep := map[int64]bool{snap.SnapshotID: true}
	for s := snap; len(keep) < minKeep && s.ParentSnapshotID != nil; {
		if s = base.SnapshotByID(*s.ParentSnapshotID); s == nil {
			break
		}
		keep[s.SnapshotID] = true
	}
	cutoff := now.Add(-maxAge).UnixMilli()
	snaps := slices.Clone(base.Snapshots())
	slices.SortFunc(snaps, func(a, b table.Snapshot) int { return cmp.Compare(a.SequenceNumber, b.SequenceNumber) })
	// snaps are base's; snap comes on top of them.
	over := 0
	if maxCount > 0 {
		over = max(len(snaps)+1-maxCount, 0)
	}
	var expired []int64
	for i, s := range snaps {
		if !keep[s.SnapshotID] && (s.TimestampMs < cutoff || i < over) {
			expired = append(expired, s.SnapshotID)
		}
	}
	return expired
}
