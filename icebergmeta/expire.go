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
)

// Defaults of the expiry properties. Java keeps snapshots 5 days; a Mink
// table commits every few seconds and Kafka itself is the history, so it
// keeps 10 minutes of them: every table load carries the snapshot list.
const (
	DefaultMaxSnapshotAge     = 10 * time.Minute
	DefaultMinSnapshotsToKeep = 1
)

// expiredSnapshots returns the ids of the snapshots of base that a commit
// of snap at now expires, oldest first: those older than
// history.expire.max-snapshot-age-ms (default DefaultMaxSnapshotAge),
// except the newest history.expire.min-snapshots-to-keep (default 1) of
// snap's ancestry, snap included. Snapshot timestamps never go back along
// a branch, so what expires is always the oldest part of the history.
func expiredSnapshots(base table.Metadata, snap *table.Snapshot, now time.Time) []int64 {
	props := base.Properties()
	maxAge := time.Duration(props.GetInt64(PropMaxSnapshotAge, DefaultMaxSnapshotAge.Milliseconds())) * time.Millisecond
	minKeep := max(props.GetInt(PropMinSnapshotsToKeep, DefaultMinSnapshotsToKeep), 1)
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
	var expired []int64
	for _, s := range snaps {
		if !keep[s.SnapshotID] && s.TimestampMs < cutoff {
			expired = append(expired, s.SnapshotID)
		}
	}
	return expired
}
