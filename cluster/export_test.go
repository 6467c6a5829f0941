package cluster

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// Internals for the tests of package cluster_test, which drive the
// cluster through its exported API as a node does, and read the lease SQL
// and the node ordering from here.

var (
	SQLLeaseTake  = sqlLeaseTake
	SQLLeasesRead = sqlLeasesRead
	TopNode       = topNode
)

// Crash makes c's Run end like a crashed process when its context is
// cancelled: jobs stop, but no lease is released and the row stays.
func Crash(c *Cluster) { c.crash.Store(true) }

// StartingAt is startingAt: whether a round that started at start, with
// the trust window open or not, is a Starting one.
func StartingAt(c *Cluster, start time.Time, trusted bool) bool { return c.startingAt(start, trusted) }

// ConfigOf returns c's configuration with its defaults.
func ConfigOf(c *Cluster) Config { return c.cfg }

// View is a lease view (view.go) for the tests: Read brings it up to date
// the way a round does.
type View struct{ v leaseView }

// Read reads what changed since the previous Read (everything the first
// time) and returns every lease; full says whether it read the whole
// table, rows how many rows its statements returned.
func (v *View) Read(ctx context.Context, q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}) (leases []LeaseState, full bool, rows int, err error) {
	ls, r, err := v.v.read(ctx, q)
	return ls, r.full, r.rows, err
}
