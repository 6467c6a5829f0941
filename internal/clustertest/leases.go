package clustertest

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/minkhq/mink/admin"
	"github.com/minkhq/mink/cluster"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/internal/testkit/proc"
)

// Lease is a lease row as Postgres has it.
type Lease struct {
	Scope     string
	Kind      string // "partition" or "writer"
	Partition int32
	// Holder is the holder column, even when the lease has expired; see
	// Free and HeldBy.
	Holder    string
	Epoch     int64
	ExpiresAt time.Time // zero when null
	// Free: holder null or expired, judged by the database clock (§3.2).
	Free bool
}

// HeldBy reports whether id holds the lease (not free).
func (l Lease) HeldBy(id string) bool { return !l.Free && l.Holder == id }

// Leases is every lease of one table at one instant of the database clock.
type Leases struct {
	At     time.Time // clock_timestamp() of the read
	Leases []Lease
}

// ByScope returns the lease with this scope.
func (ls Leases) ByScope(scope string) (Lease, bool) {
	for _, l := range ls.Leases {
		if l.Scope == scope {
			return l, true
		}
	}
	return Lease{}, false
}

// PartitionCounts returns how many partition leases each holder holds.
func (ls Leases) PartitionCounts() map[string]int {
	out := map[string]int{}
	for _, l := range ls.Leases {
		if l.Kind == "partition" && !l.Free {
			out[l.Holder]++
		}
	}
	return out
}

// HeldBy returns the leases id holds.
func (ls Leases) HeldBy(id string) []Lease {
	var out []Lease
	for _, l := range ls.Leases {
		if l.HeldBy(id) {
			out = append(out, l)
		}
	}
	return out
}

// Writer returns the holder of the writer lease ("" when free).
func (ls Leases) Writer() string {
	for _, l := range ls.Leases {
		if l.Kind == "writer" && !l.Free {
			return l.Holder
		}
	}
	return ""
}

// AllHeld reports whether every lease has a holder.
func (ls Leases) AllHeld() bool {
	for _, l := range ls.Leases {
		if l.Free {
			return false
		}
	}
	return len(ls.Leases) > 0
}

// String is a compact view for failure messages: scope=holder@epoch.
func (ls Leases) String() string {
	var b strings.Builder
	for _, l := range ls.Leases {
		h := l.Holder
		if l.Free {
			h = "free"
		}
		fmt.Fprintf(&b, "%s=%s@%d ", l.Scope, h, l.Epoch)
	}
	return strings.TrimSpace(b.String())
}

// TableID returns the id of table "ns.name".
func (e *Env) TableID(t testing.TB, table string) int64 {
	t.Helper()
	ns, name, ok := strings.Cut(table, ".")
	if !ok {
		t.Fatalf("clustertest: table %q is not ns.name", table)
	}
	var id int64
	if err := e.Pool().QueryRow(context.Background(), `SELECT id FROM tables WHERE namespace = $1 AND name = $2`, ns, name).Scan(&id); err != nil {
		t.Fatalf("clustertest: table %s: %v", table, err)
	}
	return id
}

// ReadLeases reads the table's leases from Postgres.
func (e *Env) ReadLeases(ctx context.Context, tableID int64) (Leases, error) {
	rows, err := e.Pool().Query(ctx, `
		SELECT scope, kind, coalesce(partition, 0), coalesce(holder, ''), epoch, expires_at,
		       (holder IS NULL OR expires_at IS NULL OR expires_at < clock_timestamp()), clock_timestamp()
		FROM leases WHERE table_id = $1 ORDER BY kind DESC, partition`, tableID)
	if err != nil {
		return Leases{}, err
	}
	var out Leases
	var l Lease
	var exp *time.Time
	_, err = pgx.ForEachRow(rows, []any{&l.Scope, &l.Kind, &l.Partition, &l.Holder, &l.Epoch, &exp, &l.Free, &out.At}, func() error {
		l.ExpiresAt = time.Time{}
		if exp != nil {
			l.ExpiresAt = *exp
		}
		out.Leases = append(out.Leases, l)
		return nil
	})
	if err == nil && out.At.IsZero() {
		out.At, err = e.dbNow(ctx)
	}
	return out, err
}

// Leases reads the table's leases from Postgres, failing the test on error.
func (e *Env) Leases(t testing.TB, tableID int64) Leases {
	t.Helper()
	ls, err := e.ReadLeases(context.Background(), tableID)
	if err != nil {
		t.Fatalf("clustertest: read leases: %v", err)
	}
	return ls
}

// WaitLeases polls the table's leases (every 50 ms) until cond holds.
func (e *Env) WaitLeases(t testing.TB, tableID int64, timeout time.Duration, what string, cond func(Leases) bool) Leases {
	t.Helper()
	var last Leases
	testkit.Eventually(t, timeout, 50*time.Millisecond, what, func() (bool, string) {
		ls, err := e.ReadLeases(context.Background(), tableID)
		if err != nil {
			return false, err.Error()
		}
		last = ls
		return cond(ls), ls.String()
	})
	return last
}

// WaitBalanced waits until every lease of the table is held and the
// partition leases are spread as counts says (holder → count; every
// holder listed), and returns the leases.
func (e *Env) WaitBalanced(t testing.TB, tableID int64, timeout time.Duration, counts map[string]int) Leases {
	t.Helper()
	return e.WaitLeases(t, tableID, timeout, fmt.Sprintf("partition leases spread as %v", counts), func(ls Leases) bool {
		if !ls.AllHeld() {
			return false
		}
		got := ls.PartitionCounts()
		if len(got) != len(counts) {
			return false
		}
		for id, n := range counts {
			if got[id] != n {
				return false
			}
		}
		_, ok := counts[ls.Writer()]
		return ok
	})
}

// DBNow returns the database's clock_timestamp().
func (e *Env) DBNow(t testing.TB) time.Time {
	t.Helper()
	now, err := e.dbNow(context.Background())
	if err != nil {
		t.Fatalf("clustertest: database clock: %v", err)
	}
	return now
}

func (e *Env) dbNow(ctx context.Context) (time.Time, error) {
	var now time.Time
	err := e.Pool().QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&now)
	return now, err
}

// NodeRow is a row of the nodes table.
type NodeRow struct {
	ID        string
	Roles     []string
	ExpiresAt time.Time
	Live      bool
}

// NodeRows reads the nodes table (expired rows too).
func (e *Env) NodeRows(t testing.TB) map[string]NodeRow {
	t.Helper()
	rows, err := e.Pool().Query(context.Background(), `SELECT id, roles, expires_at, expires_at > clock_timestamp() FROM nodes`)
	if err != nil {
		t.Fatalf("clustertest: read nodes: %v", err)
	}
	out := map[string]NodeRow{}
	var r NodeRow
	if _, err := pgx.ForEachRow(rows, []any{&r.ID, &r.Roles, &r.ExpiresAt, &r.Live}, func() error {
		out[r.ID] = r
		return nil
	}); err != nil {
		t.Fatalf("clustertest: read nodes: %v", err)
	}
	return out
}

// AdminLeases is GET /admin/v1/leases on a node.
func AdminLeases(ctx context.Context, nodeURL string) ([]admin.LeaseStatus, error) {
	var body struct {
		Leases []admin.LeaseStatus `json:"leases"`
	}
	err := proc.GetJSON(ctx, nodeURL+"/admin/v1/leases", &body)
	return body.Leases, err
}

// AdminNodes is GET /admin/v1/nodes on a node.
func AdminNodes(ctx context.Context, nodeURL string) ([]admin.NodeStatus, error) {
	var body struct {
		Nodes []admin.NodeStatus `json:"nodes"`
	}
	err := proc.GetJSON(ctx, nodeURL+"/admin/v1/nodes", &body)
	return body.Nodes, err
}

// AdminHeld is GET /admin/v1/nodes/{id}/leases on the node with this id:
// the leases its cluster loop holds.
func AdminHeld(ctx context.Context, nodeURL, id string) ([]cluster.Lease, error) {
	var held []cluster.Lease
	err := proc.GetJSON(ctx, nodeURL+"/admin/v1/nodes/"+id+"/leases", &held)
	return held, err
}

// AdminPartitionCounts counts the partition leases of table (ns.name) per
// holder through GET /admin/v1/leases.
func AdminPartitionCounts(t testing.TB, nodeURL, table string) map[string]int {
	t.Helper()
	ls, err := AdminLeases(context.Background(), nodeURL)
	if err != nil {
		t.Fatalf("clustertest: %v", err)
	}
	out := map[string]int{}
	for _, l := range ls {
		if l.Table == table && l.Kind == "partition" && l.Holder != nil {
			out[*l.Holder]++
		}
	}
	return out
}

// Range is an indexed range [Start, End) of one partition.
type Range struct {
	Start, End int64
	Holder     string
	Epoch      int64
	CreatedAt  time.Time
}

// Ranges reads the table's indexed ranges per partition, in offset order.
func (e *Env) Ranges(t testing.TB, tableID int64) map[int32][]Range {
	t.Helper()
	rows, err := e.Pool().Query(context.Background(), `
		SELECT partition, start_offset, end_offset, lease_holder, lease_epoch, created_at
		FROM ranges WHERE table_id = $1 ORDER BY partition, start_offset`, tableID)
	if err != nil {
		t.Fatalf("clustertest: read ranges: %v", err)
	}
	out := map[int32][]Range{}
	var p int32
	var r Range
	if _, err := pgx.ForEachRow(rows, []any{&p, &r.Start, &r.End, &r.Holder, &r.Epoch, &r.CreatedAt}, func() error {
		out[p] = append(out[p], r)
		return nil
	}); err != nil {
		t.Fatalf("clustertest: read ranges: %v", err)
	}
	return out
}

// CheckRangesTile asserts that each partition's indexed ranges tile the
// offsets from the partition's start offset with no gap and no overlap,
// up to at least the end of what was produced. It returns how many ranges
// each (holder, epoch) wrote, for the test's log.
func (e *Env) CheckRangesTile(t testing.TB, tableID int64, produced Produced) map[string]int {
	t.Helper()
	starts := map[int32]int64{}
	rows, err := e.Pool().Query(context.Background(), `SELECT partition, start_offset FROM partitions WHERE table_id = $1`, tableID)
	if err != nil {
		t.Fatalf("clustertest: read partitions: %v", err)
	}
	var p int32
	var s int64
	if _, err := pgx.ForEachRow(rows, []any{&p, &s}, func() error { starts[p] = s; return nil }); err != nil {
		t.Fatalf("clustertest: read partitions: %v", err)
	}
	ranges := e.Ranges(t, tableID)
	ends := produced.Ends()
	writers := map[string]int{}
	parts := make([]int32, 0, len(starts))
	for p := range starts {
		parts = append(parts, p)
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i] < parts[j] })
	for _, p := range parts {
		next := starts[p]
		for _, r := range ranges[p] {
			if r.Start != next {
				t.Errorf("partition %d: range [%d, %d) (by %s epoch %d) starts at %d, want %d: a gap or an overlap",
					p, r.Start, r.End, r.Holder, r.Epoch, r.Start, next)
			}
			if r.End <= r.Start {
				t.Errorf("partition %d: empty range [%d, %d)", p, r.Start, r.End)
			}
			next = r.End
			writers[fmt.Sprintf("%s@%d", r.Holder, r.Epoch)]++
		}
		if next < ends[p] {
			t.Errorf("partition %d: indexed up to %d, produced up to %d", p, next, ends[p])
		}
	}
	for p := range ranges {
		if _, ok := starts[p]; !ok {
			t.Errorf("ranges of unknown partition %d", p)
		}
	}
	return writers
}

// Takeover is a lease seen under a new epoch after its holder failed.
type Takeover struct {
	Scope      string
	From, To   string // To is "" when the lease was seen free under the new epoch
	OldEpoch   int64
	NewEpoch   int64
	OldExpires time.Time // expires_at of the old holding (database clock)
	// TakenAt is the database time of the take: the new holding's
	// expires_at − lease_ttl when it was seen before its first renewal,
	// else no later than SeenAt.
	TakenAt time.Time
	SeenAt  time.Time // database time of the read that first saw it
}

// WaitTakeovers polls the table's leases every 25 ms until each of old
// is held under a newer epoch, and returns when each was taken.
func (e *Env) WaitTakeovers(t testing.TB, tableID int64, old []Lease, ttl, timeout time.Duration) []Takeover {
	t.Helper()
	found := map[string]Takeover{}
	testkit.Eventually(t, timeout, 25*time.Millisecond, fmt.Sprintf("%d leases taken over", len(old)), func() (bool, string) {
		ls, err := e.ReadLeases(context.Background(), tableID)
		if err != nil {
			return false, err.Error()
		}
		for _, o := range old {
			if _, ok := found[o.Scope]; ok {
				continue
			}
			l, ok := ls.ByScope(o.Scope)
			if !ok || l.Epoch <= o.Epoch {
				continue
			}
			to := Takeover{Scope: o.Scope, From: o.Holder, OldEpoch: o.Epoch, NewEpoch: l.Epoch,
				OldExpires: o.ExpiresAt, SeenAt: ls.At, TakenAt: ls.At}
			if !l.Free {
				to.To = l.Holder
				if at := l.ExpiresAt.Add(-ttl); at.Before(to.TakenAt) {
					to.TakenAt = at
				}
			}
			found[o.Scope] = to
		}
		return len(found) == len(old), ls.String()
	})
	out := make([]Takeover, 0, len(old))
	for _, o := range old {
		out = append(out, found[o.Scope])
	}
	return out
}

// Sampler reads a table's leases at a fixed period in the background.
type Sampler struct {
	stop    chan struct{}
	done    chan struct{}
	samples []Leases
	errs    int
}

// SampleLeases starts reading the table's leases every period until Stop.
func (e *Env) SampleLeases(tableID int64, period time.Duration) *Sampler {
	s := &Sampler{stop: make(chan struct{}), done: make(chan struct{})}
	e.t.Cleanup(func() { s.Stop() })
	go func() {
		defer close(s.done)
		tick := time.NewTicker(period)
		defer tick.Stop()
		sample := func() {
			ctx, cancel := context.WithTimeout(context.Background(), period*5)
			ls, err := e.ReadLeases(ctx, tableID)
			cancel()
			if err != nil {
				s.errs++
			} else {
				s.samples = append(s.samples, ls)
			}
		}
		for {
			sample()
			select {
			case <-s.stop:
				// One more: the state the caller waited for before Stop
				// (e.g. balanced) is then in the samples, whatever the
				// tick's phase.
				sample()
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

// Stop ends the sampling and returns the samples in time order.
func (s *Sampler) Stop() []Leases {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	<-s.done
	return s.samples
}
