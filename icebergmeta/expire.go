package icebergmeta

import (
	"cmp"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
)

// Table properties of snapshot expiry (docs/design.md §4.6). A snapshot is
// kept while Kafka holds every file it lists (the caller names those that
// fell below the log start: AppendInput.Expire, RewriteInput.Expire,
// ExpireSnapshots); older snapshots are thinned to bound the metadata.
const (
	// PropMaxSnapshotAge is the age in milliseconds past which a snapshot
	// expires (Iceberg's name). Mink applies it only when the table sets
	// it: Kafka's retention bounds the history otherwise.
	PropMaxSnapshotAge = "history.expire.max-snapshot-age-ms"
	// PropMinSnapshotsToKeep is how many of the newest snapshots of
	// branch main's ancestry never expire by age, thinning or count
	// (Iceberg's name; default 1).
	PropMinSnapshotsToKeep = "history.expire.min-snapshots-to-keep"
	// PropMaxSnapshots (Mink's own) is how many snapshots a table keeps
	// at most, the oldest expiring first; 0 means no bound. A safety
	// bound on the metadata JSON (about 620 bytes a snapshot), which every
	// commit rewrites and every table load carries.
	PropMaxSnapshots = "mink.history.max-snapshots"
	// PropThinning (Mink's own) says how densely old history is kept:
	// comma-separated AGE:STEP pairs (ParseThinning). Past AGE, only the
	// newest snapshot of each epoch-aligned window of STEP is kept.
	PropThinning = "mink.history.thinning"
)

// Defaults of the expiry properties.
const (
	DefaultMinSnapshotsToKeep = 1
	// DefaultMaxSnapshots bounds the metadata JSON near 3 MiB; the default
	// thinning keeps about 2,000 snapshots of a table committing every 2 s
	// (BenchmarkAppendWeekOfHistory, docs/design.md §4.6).
	DefaultMaxSnapshots = 5000
	// DefaultThinning keeps every snapshot of the last minute (one per
	// commit), then one per 2 s, 10 s, minute and hour: AS OF T finds a
	// snapshot within one step (plus a commit interval) of T.
	DefaultThinning = "1m:2s,10m:10s,1h:1m,1d:1h"
)

// ThinningStep is one AGE:STEP pair of PropThinning: snapshots older than
// Age keep one per epoch-aligned window of Step (the newest).
type ThinningStep struct {
	Age, Step time.Duration
}

// Thinning is a table's thinning steps, by increasing age; empty keeps
// every snapshot (up to PropMaxSnapshots).
type Thinning []ThinningStep

// ErrInvalidThinning is wrapped by ParseThinning's errors.
var ErrInvalidThinning = errors.New("invalid " + PropThinning)

// ParseThinning parses PropThinning: comma-separated AGE:STEP pairs such as
// "1m:2s,10m:10s,1h:1m,1d:1h" (DefaultThinning), durations in Go's syntax
// (ms, s, m, h, combinations like 1h30m) or whole days ("1d", "7d"); empty
// means no thinning. Ages strictly increase; each step is a positive whole
// number of milliseconds and a multiple of the previous step, so a
// snapshot kept by a step is also the newest of its window at the next
// (thinning never needs a snapshot it expired). Errors wrap
// ErrInvalidThinning and name the bad pair.
func ParseThinning(s string) (Thinning, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var th Thinning
	for _, pair := range strings.Split(s, ",") {
		a, st, ok := strings.Cut(strings.TrimSpace(pair), ":")
		if !ok {
			return nil, fmt.Errorf("%w: %q is not AGE:STEP", ErrInvalidThinning, pair)
		}
		age, err := parseDuration(a)
		if err != nil || age < 0 {
			return nil, fmt.Errorf("%w: %q: age %q is not a duration such as 10m or 1d", ErrInvalidThinning, pair, a)
		}
		step, err := parseDuration(st)
		if err != nil || step < time.Millisecond || step%time.Millisecond != 0 {
			return nil, fmt.Errorf("%w: %q: step %q is not a positive whole number of milliseconds such as 10s", ErrInvalidThinning, pair, st)
		}
		if n := len(th); n > 0 {
			if age <= th[n-1].Age {
				return nil, fmt.Errorf("%w: %q: ages must increase (after %s)", ErrInvalidThinning, pair, th[n-1].Age)
			}
			if step%th[n-1].Step != 0 {
				return nil, fmt.Errorf("%w: %q: step %s is not a multiple of the previous step %s", ErrInvalidThinning, pair, step, th[n-1].Step)
			}
		}
		th = append(th, ThinningStep{Age: age, Step: step})
	}
	return th, nil
}

// parseDuration is time.ParseDuration that also takes whole days ("7d").
func parseDuration(s string) (time.Duration, error) {
	if d, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseInt(d, 10, 32)
		if err != nil {
			return 0, err
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	return time.ParseDuration(s)
}

// step is the thinning step for a snapshot of the given age; 0 keeps it.
func (th Thinning) step(age time.Duration) time.Duration {
	var s time.Duration
	for _, t := range th {
		if age < t.Age {
			break
		}
		s = t.Step
	}
	return s
}

// expiryPolicy is a table's expiry properties.
type expiryPolicy struct {
	maxAge   time.Duration // 0: not set
	minKeep  int
	maxCount int // 0: no bound
	thinning Thinning
}

// policyOf reads md's expiry properties; a value that does not parse (the
// table definition validates them) means the default.
func policyOf(md table.Metadata) expiryPolicy {
	props := md.Properties()
	p := expiryPolicy{
		maxAge:   time.Duration(props.GetInt64(PropMaxSnapshotAge, 0)) * time.Millisecond,
		minKeep:  max(props.GetInt(PropMinSnapshotsToKeep, DefaultMinSnapshotsToKeep), 1),
		maxCount: props.GetInt(PropMaxSnapshots, DefaultMaxSnapshots),
	}
	th, err := ParseThinning(props.Get(PropThinning, DefaultThinning))
	if err != nil {
		th, _ = ParseThinning(DefaultThinning)
	}
	p.thinning = th
	return p
}

// snapEntry is what expiry needs of a snapshot.
type snapEntry struct {
	id, seq, ts int64
}

// expire returns the ids of snaps (sorted by sequence number, oldest first;
// the head not among them) that expire at nowMs, oldest first: those in
// below (their data fell below Kafka's log start), those older than maxAge
// when set, those thinning drops, and then the oldest of the rest past
// maxCount (head counted). protected are never returned (the head's
// ancestry kept by minKeep, snapshots of refs other than main).
func (p expiryPolicy) expire(snaps []snapEntry, nowMs int64, protected, below map[int64]bool) []int64 {
	gone := make([]bool, len(snaps))
	cutoff := int64(-1 << 62)
	if p.maxAge > 0 {
		cutoff = nowMs - p.maxAge.Milliseconds()
	}
	// Thinning: walking from the newest, a snapshot is kept when it is the
	// first (newest) of its (step, window) among the snapshots that may
	// expire; windows are epoch-aligned, so the kept ones stay kept as
	// they age into larger steps (each a multiple of the last).
	var lastStep, lastWindow int64 = 0, -1 << 62
	for i := len(snaps) - 1; i >= 0; i-- {
		s := snaps[i]
		if protected[s.id] {
			continue
		}
		if below[s.id] || s.ts < cutoff {
			gone[i] = true
			continue
		}
		step := p.thinning.step(time.Duration(nowMs-s.ts) * time.Millisecond).Milliseconds()
		if step == 0 {
			continue
		}
		w := floorDiv(s.ts, step)
		if step == lastStep && w == lastWindow {
			gone[i] = true
			continue
		}
		lastStep, lastWindow = step, w
	}
	if p.maxCount > 0 {
		left := 1 // the head
		for i := range snaps {
			if !gone[i] {
				left++
			}
		}
		for i := 0; i < len(snaps) && left > p.maxCount; i++ {
			if !gone[i] && !protected[snaps[i].id] {
				gone[i] = true
				left--
			}
		}
	}
	var ids []int64
	for i, g := range gone {
		if g {
			ids = append(ids, snaps[i].id)
		}
	}
	return ids
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// expiredSnapshots returns the ids of the snapshots of base that a commit
// making head the current snapshot of main at now expires, oldest first
// (expiryPolicy.expire with base's properties). below are snapshots whose
// data fell below Kafka's log start. Never expired: head, the newest
// history.expire.min-snapshots-to-keep of head's ancestry (head included),
// and every snapshot a ref other than main names (tags such as the
// consumer-group tags, other branches). Parent ids of retained snapshots
// are left as they are: with thinning, a retained snapshot's parent may be
// gone (incremental readers restart from a retained snapshot).
func expiredSnapshots(base table.Metadata, head *table.Snapshot, now time.Time, below []int64) []int64 {
	p := policyOf(base)
	protected := map[int64]bool{head.SnapshotID: true}
	for name, ref := range base.Refs() {
		if name != table.MainBranch {
			protected[ref.SnapshotID] = true
		}
	}
	kept := 1
	for s := head; kept < p.minKeep && s.ParentSnapshotID != nil; kept++ {
		if s = base.SnapshotByID(*s.ParentSnapshotID); s == nil {
			break
		}
		protected[s.SnapshotID] = true
	}
	var belowSet map[int64]bool
	if len(below) > 0 {
		belowSet = make(map[int64]bool, len(below))
		for _, id := range below {
			belowSet[id] = true
		}
	}
	snaps := make([]snapEntry, 0, len(base.Snapshots()))
	for _, s := range base.Snapshots() {
		if s.SnapshotID != head.SnapshotID {
			snaps = append(snaps, snapEntry{id: s.SnapshotID, seq: s.SequenceNumber, ts: s.TimestampMs})
		}
	}
	slices.SortFunc(snaps, func(a, b snapEntry) int { return cmp.Compare(a.seq, b.seq) })
	return p.expire(snaps, now.UnixMilli(), protected, belowSet)
}

// retainedLog is base with a snapshot-log that names only snapshots that
// stay (in base and not in expired). iceberg-go's builder (v0.7), when a
// commit removes snapshots, drops every snapshot-log entry before the last
// removed one: thinning removes snapshots in the middle of the history, so
// the log would shrink to the newest few, and engines resolve `FOR
// TIMESTAMP AS OF` from the snapshot-log. Handing the builder a base whose
// log has nothing to remove keeps it whole.
func retainedLog(base table.Metadata, expired []int64) table.Metadata {
	gone := make(map[int64]bool, len(expired))
	for _, id := range expired {
		gone[id] = true
	}
	var log []table.SnapshotLogEntry
	for e := range base.SnapshotLogs() {
		if !gone[e.SnapshotID] && base.SnapshotByID(e.SnapshotID) != nil {
			log = append(log, e)
		}
	}
	return logView{Metadata: base, log: log}
}

// logView is a table.Metadata with another snapshot-log. Being another
// type, it makes MetadataBuilderFromBase copy the metadata through the
// interface's getters.
type logView struct {
	table.Metadata
	log []table.SnapshotLogEntry
}

func (m logView) SnapshotLogs() iter.Seq[table.SnapshotLogEntry] { return slices.Values(m.log) }

// ExpireInput is a commit that only expires snapshots (docs/design.md
// §4.6: snapshots whose data fell below Kafka's log start when no other
// commit is due).
type ExpireInput struct {
	// Metadata, MetadataLocation and Parsed are the current metadata, as
	// in AppendInput.
	Metadata         []byte
	MetadataLocation string
	Parsed           table.Metadata
	// Expire are snapshots to expire besides what the table's properties
	// expire (the current one and those of refs other than main stay).
	Expire []int64
	// Now is the time ages are measured at.
	Now time.Time
	// CommitUUID names the new metadata file; zero means a random one.
	CommitUUID uuid.UUID
}

// ExpireSnapshots returns the next metadata file of in without the
// snapshots that expire (expiredSnapshots, the current snapshot as head),
// or nil when none does. Its Expired lists them, oldest first.
func ExpireSnapshots(in ExpireInput) (*MetadataUpdate, error) {
	version, base, err := parseBase("expire", in.MetadataLocation, in.Metadata, in.Parsed)
	if err != nil {
		return nil, err
	}
	head := base.CurrentSnapshot()
	if head == nil {
		return nil, nil
	}
	expired := expiredSnapshots(base, head, in.Now, in.Expire)
	if len(expired) == 0 {
		return nil, nil
	}
	b, err := table.MetadataBuilderFromBase(retainedLog(base, expired), in.MetadataLocation)
	if err != nil {
		return nil, err
	}
	if err := b.RemoveSnapshots(expired, false); err != nil {
		return nil, fmt.Errorf("icebergmeta: expire: %w", err)
	}
	upd, err := nextMetadata(b, base, version, in.CommitUUID, "expire")
	if err != nil {
		return nil, err
	}
	upd.Expired = expired
	return upd, nil
}
