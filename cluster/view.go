package cluster

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/jackc/pgx/v5"
)

// nothingSeen is a pg_snapshot that saw no transaction (xmin = xmax = 1):
// every lease row is a change since it, so a read from it is a full read.
const nothingSeen = "1:1:"

// leaseView is a node's copy of the lease table (docs/design.md §3.3, "A
// round reads what changed"), kept by reading, each round, only what
// changed since the previous read (sql/leases_changes.sql): the rows a
// transaction the previous snapshot did not see inserted, took or released
// (leases.changed, migration 012), the rows deleted since (tombstones), and
// the holdings that have expired (an expiry changes no row). After a read
// the view equals the lease table at the read's snapshot, as a full read at
// that snapshot would return it: by induction, since every row whose view
// columns differ between two snapshots was written by a transaction the
// first did not see and the second did.
//
// The view decides nothing the database has not said: Free is the
// database's verdict at the read, and a take is judged again by
// lease_take.sql. It is used by the round's goroutine only.
type leaseView struct {
	// snapshot is the last read's snapshot ("" before the first read).
	snapshot string
	rows     map[string]LeaseState // by scope; Free is not kept
	// scopes are the keys of rows, sorted; nil when they changed.
	scopes []string
}

// viewRead is what one read of the view returned.
type viewRead struct {
	// full is true for a read of the whole table: the first, or one after
	// tombstones were pruned that the previous snapshot had not seen.
	full bool
	// rows counts the rows the statements returned (all kinds).
	rows int
	// changed, deleted and expired count the lease rows, tombstones and
	// expired holdings among them.
	changed, deleted, expired int
}

// read brings the view up to date and returns every lease, ordered by
// scope, with Free judged by the database clock at the read. An error
// leaves the view as it was: it is still the table at its snapshot, so the
// next read from that snapshot is exact.
func (v *leaseView) read(ctx context.Context, q pgxQuerier) ([]LeaseState, viewRead, error) {
	full := v.snapshot == ""
	r, err := v.readFrom(ctx, q, full)
	if err == nil && r.stale && !full {
		// Tombstones the previous snapshot had not seen were pruned:
		// deletions may be missing, so read everything.
		var again changes
		again, err = v.readFrom(ctx, q, true)
		again.read.rows += r.read.rows
		r, full = again, true
	}
	if err != nil {
		return nil, viewRead{}, err
	}
	if full {
		v.rows, v.scopes = map[string]LeaseState{}, nil
	}
	for _, s := range r.deleted {
		if _, ok := v.rows[s]; ok {
			delete(v.rows, s)
			v.scopes = nil
		}
	}
	// After the deletions: a row present now reflects the latest write,
	// whatever was deleted under its scope before.
	for _, l := range r.changed {
		if _, ok := v.rows[l.Scope]; !ok {
			v.scopes = nil
		}
		v.rows[l.Scope] = l
	}
	v.snapshot = r.snapshot
	if v.scopes == nil {
		v.scopes = slices.Sorted(maps.Keys(v.rows))
	}
	out := make([]LeaseState, len(v.scopes))
	for i, s := range v.scopes {
		l := v.rows[s]
		l.Free = l.Holder == "" || r.expired[s]
		out[i] = l
	}
	r.read.full = full
	return out, r.read, nil
}

// changes is what one run of leases_changes.sql returned.
type changes struct {
	snapshot string
	stale    bool
	deleted  []string
	changed  []LeaseState
	expired  map[string]bool
	read     viewRead
}

// pgxQuerier is the part of a pool or connection a read needs.
type pgxQuerier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

func (v *leaseView) readFrom(ctx context.Context, q pgxQuerier, full bool) (changes, error) {
	prev := v.snapshot
	if full {
		prev = nothingSeen
	}
	out := changes{expired: map[string]bool{}}
	rows, err := q.Query(ctx, sqlLeasesChanges, prev)
	if err != nil {
		return out, fmt.Errorf("cluster: read leases: %w", err)
	}
	var what string
	var l LeaseState
	_, err = pgx.ForEachRow(rows, []any{&what, &l.Scope, &l.TableID, &l.Kind, &l.Partition, &l.Holder, &l.Epoch}, func() error {
		out.read.rows++
		switch what {
		case "snapshot":
			out.snapshot = l.Scope
		case "stale":
			out.stale = true
		case "deleted":
			out.deleted = append(out.deleted, l.Scope)
			out.read.deleted++
		case "lease":
			out.changed = append(out.changed, l)
			out.read.changed++
		case "expired":
			out.expired[l.Scope] = true
			out.read.expired++
		default:
			return fmt.Errorf("unknown row kind %q", what)
		}
		return nil
	})
	if err != nil {
		return out, fmt.Errorf("cluster: read leases: %w", err)
	}
	if out.snapshot == "" {
		return out, fmt.Errorf("cluster: read leases: no snapshot returned")
	}
	return out, nil
}
