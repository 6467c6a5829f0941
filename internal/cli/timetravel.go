package cli

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go/table"
)

// snapshotSelector is which snapshot `mink scan` reads: at most one of
// --snapshot-id, --ref and --as-of; none reads the current snapshot.
type snapshotSelector struct {
	snapshotID *int64
	ref        string
	// asOf is a time in Unix milliseconds, as the snapshot-log has them.
	asOf *int64
}

// stringArg is a string flag of the command line only: a stray MINK_REF
// or as_of in a config file would silently turn every scan into a read
// of the past.
type stringArg string

func (s *stringArg) String() string     { return string(*s) }
func (s *stringArg) Set(v string) error { *s = stringArg(v); return nil }
func (s *stringArg) commandLineOnly()   {}

// selectorFlags adds --snapshot-id, --ref and --as-of to fs; the returned
// function reads them once fs is parsed.
func selectorFlags(fs *flag.FlagSet) func() (snapshotSelector, error) {
	var id, ref, asOf stringArg
	fs.Var(&id, "snapshot-id", "read this snapshot (an id of the table's metadata) instead of the current one")
	fs.Var(&ref, "ref", "read the snapshot of this branch or tag, e.g. group.billing (a consumer group's tag)")
	fs.Var(&asOf, "as-of", "read the snapshot current at this time: RFC 3339 (2026-01-02T15:04:05Z) or Unix milliseconds, "+
		"picked from the snapshot-log as FOR TIMESTAMP AS OF does")
	return func() (snapshotSelector, error) {
		var sel snapshotSelector
		// A flag counts as given when it is on the command line, even
		// with an empty value: `--as-of "$T"` with T unset must fail,
		// not silently read the current snapshot.
		var given []string
		empty := ""
		fs.Visit(func(f *flag.Flag) {
			switch f.Name {
			case "snapshot-id", "ref", "as-of":
				given = append(given, f.Name)
				if f.Value.String() == "" && empty == "" {
					empty = f.Name
				}
			}
		})
		if empty != "" {
			return sel, usagef("--%s needs a value, not an empty string (leave the flag out to read the current snapshot)", empty)
		}
		if len(given) > 1 {
			return sel, usagef("give at most one of --snapshot-id, --ref and --as-of")
		}
		if v := string(id); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return sel, usagef("--snapshot-id must be a snapshot id (an integer), not %q", v)
			}
			sel.snapshotID = &n
		}
		sel.ref = string(ref)
		if v := string(asOf); v != "" {
			ms, err := parseAsOf(v)
			if err != nil {
				return sel, usageError{err}
			}
			sel.asOf = &ms
		}
		return sel, nil
	}
}

// parseAsOf reads --as-of: an RFC 3339 time (any offset, fractions of a
// second allowed) or an integer of Unix milliseconds. It returns Unix
// milliseconds, truncated toward the past: a snapshot committed within
// the given millisecond counts as at or before it.
func parseAsOf(s string) (int64, error) {
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		return ms, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, fmt.Errorf("--as-of must be an RFC 3339 time (2026-01-02T15:04:05Z) or Unix milliseconds, not %q", s)
	}
	return t.UnixMilli(), nil
}

// errNoSnapshot is the error of a selector that names no snapshot of the
// table: an unknown id or ref, or a time before the oldest retained
// snapshot.
var errNoSnapshot = errors.New("no such snapshot")

// pick returns the snapshot sel names in tbl's metadata, nil for the
// current one (no selector), or an error wrapping errNoSnapshot that
// says what the table has instead. The choice is iceberg-go's:
// SnapshotByID, SnapshotByName (the refs) and SnapshotAsOf (the newest
// snapshot-log entry at or before the time, as engines resolve FOR
// TIMESTAMP AS OF; Mink keeps every retained snapshot in the log,
// docs/design.md §4.6).
func (sel snapshotSelector) pick(tbl *table.Table) (*table.Snapshot, error) {
	md := tbl.Metadata()
	switch {
	case sel.snapshotID != nil:
		if s := md.SnapshotByID(*sel.snapshotID); s != nil {
			return s, nil
		}
		return nil, fmt.Errorf("%w: snapshot %d is not in the table's metadata (expired, or never one of this table)%s",
			errNoSnapshot, *sel.snapshotID, retainedText(md))
	case sel.ref != "":
		if s := md.SnapshotByName(sel.ref); s != nil {
			return s, nil
		}
		var refs []string
		for name := range md.Refs() {
			refs = append(refs, name)
		}
		slices.Sort(refs)
		have := "none"
		if len(refs) > 0 {
			have = strings.Join(refs, ", ")
		}
		return nil, fmt.Errorf("%w: no ref %q in the table (its refs: %s)", errNoSnapshot, sel.ref, have)
	case sel.asOf != nil:
		if s := tbl.SnapshotAsOf(*sel.asOf, true); s != nil {
			return s, nil
		}
		return nil, fmt.Errorf("%w: no snapshot at or before %s%s", errNoSnapshot, msText(*sel.asOf), retainedText(md))
	}
	return nil, nil
}

// retainedText says, for an error, which snapshots the table's metadata
// holds: "; main's history: 12 snapshots, the oldest from 2026-…Z; refs
// besides main: group.billing". Main's count and oldest time are its
// snapshot-log's (the times FOR TIMESTAMP AS OF can reach), as mink table
// status counts them; the tags' snapshots are named by their refs.
func retainedText(md table.Metadata) string {
	n, oldest := int64(0), int64(0)
	for e := range md.SnapshotLogs() {
		if n == 0 || e.TimestampMs < oldest {
			oldest = e.TimestampMs
		}
		n++
	}
	var refs []string
	for name := range md.Refs() {
		if name != table.MainBranch {
			refs = append(refs, name)
		}
	}
	slices.Sort(refs)
	text := "; main's history: none yet"
	if n > 0 {
		text = fmt.Sprintf("; main's history: %s, the oldest from %s",
			plural(n, "1 snapshot", thousands(n)+" snapshots"), msText(oldest))
	}
	switch {
	case len(refs) > 0:
		text += "; refs besides main: " + strings.Join(refs, ", ")
	case n == 0:
		text = "; the table has no snapshot yet"
	}
	return text
}

// msText prints Unix milliseconds as RFC 3339 in UTC.
func msText(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z07:00")
}
