package cluster

import (
	"cmp"
	"context"
	"crypto/rand"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed sql/*.sql
var sqlFiles embed.FS

// The queries, one file each under sql/.
var (
	sqlNodeUpsert       = mustSQL("node_upsert.sql")
	sqlNodeDelete       = mustSQL("node_delete.sql")
	sqlNodesLive        = mustSQL("nodes_live.sql")
	sqlLeasesRead       = mustSQL("leases_read.sql")
	sqlLeasesChanges    = mustSQL("leases_changes.sql")
	sqlLeasesRenew      = mustSQL("leases_renew.sql")
	sqlLeaseTake        = mustSQL("lease_take.sql")
	sqlLeaseRelease     = mustSQL("lease_release.sql")
	sqlLeasesReleaseAll = mustSQL("leases_release_all.sql")
)

func mustSQL(name string) string {
	b, err := sqlFiles.ReadFile("sql/" + name)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// stopTimeout bounds the final statements of a clean stop.
const stopTimeout = 5 * time.Second

// ErrNodeIDInUse is the error of a round while another live process has
// registered the same node id: this node waits for that row to expire and
// takes nothing meanwhile.
var ErrNodeIDInUse = errors.New("cluster: node id is in use by another live process")

// ErrRunning is returned by Run when the Cluster is already running.
var ErrRunning = errors.New("cluster: already running")

// Cluster is one node's membership and lease loop (docs/design.md §3): it keeps the
// node's row alive, shares the leases with the other nodes by the rules of
// Plan, and runs one job per held lease. See the package documentation.
type Cluster struct {
	pool     *pgxpool.Pool
	cfg      Config
	jobs     Jobs
	log      *slog.Logger
	interval time.Duration // LeaseTTL/3: the round period and each round's timeout
	ttlUS    int64         // LeaseTTL in microseconds, for the SQL
	instance string        // this process's token in its node row
	m        *metrics

	// view is the node's copy of the lease table (view.go); only the
	// round's goroutine uses it.
	view leaseView

	// wake asks for a round now (capacity 1: requests coalesce); see
	// notify.go.
	wake chan struct{}

	running atomic.Bool
	// crash makes Run end like a crashed process when its ctx is
	// cancelled: jobs stop, nothing is released, the row stays (tests).
	crash atomic.Bool

	jobBase context.Context // parent of the jobs' contexts, set by Run
	wg      sync.WaitGroup  // job goroutines

	mu         sync.Mutex
	held       map[string]*holding
	members    []Member
	registered bool
	lastOK     time.Time // start of the last successful round (monotonic)
	firstStart time.Time // start of the first round of this registration, or after the trust window ended (monotonic)
	trustUntil time.Time // jobs run only before this instant (monotonic)
	trustTimer *time.Timer
}

// holding is a lease this node holds and, when running, its job.
type holding struct {
	lease Lease
	job   *job // nil when no job was started for this holding yet
}

type job struct {
	cancel context.CancelFunc
	done   chan struct{}
	// failed and err are written before done is closed: a job failed when
	// it returned an error before it was asked to stop.
	failed bool
	err    error
}

func (j *job) finished() bool {
	select {
	case <-j.done:
		return true
	default:
		return false
	}
}

// New fills cfg's defaults, validates it and returns a Cluster that does
// nothing until Run. cfg.NodeID is required (the caller defaults it).
func New(pool *pgxpool.Pool, cfg Config, jobs Jobs) (*Cluster, error) {
	if pool == nil {
		return nil, errors.New("cluster: nil pool")
	}
	if jobs == nil {
		return nil, errors.New("cluster: nil jobs")
	}
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Cluster{
		pool:     pool,
		cfg:      cfg,
		jobs:     jobs,
		log:      cfg.Logger.With("node_id", cfg.NodeID),
		interval: cfg.LeaseTTL / 3,
		ttlUS:    cfg.LeaseTTL.Microseconds(),
		instance: newInstance(),
		m:        newMetrics(cfg.Registerer, cfg.Logger),
		held:     map[string]*holding{},
		wake:     make(chan struct{}, 1),
	}, nil
}

// Run registers the node and runs sharing rounds every LeaseTTL/3, and at
// once on a notice from the database (see "When rounds run" in the package
// documentation), until ctx is done, then stops cleanly: it stops every job, releases every lease and
// deletes the node row, with a fresh short context. Rounds that fail (for
// example while Postgres does not answer) are logged and retried; they
// never end Run. Run returns nil after a clean stop, or the errors of the
// final statements.
func (c *Cluster) Run(ctx context.Context) error {
	if !c.running.CompareAndSwap(false, true) {
		return ErrRunning
	}
	defer c.running.Store(false)
	c.jobBase = context.WithoutCancel(ctx)
	c.log.Info("cluster: starting", "roles", c.cfg.Roles, "lease_ttl", c.cfg.LeaseTTL,
		"max_partitions", c.cfg.MaxPartitions)

	// Rounds run every interval, and at once on a notice from the
	// database (notify.go): a table created or dropped, a node stopped.
	lctx, stopListening := context.WithCancel(ctx)
	listening := make(chan struct{})
	go func() { defer close(listening); c.listen(lctx) }()
	defer func() { stopListening(); <-listening }()

	timer := time.NewTimer(0)
	defer timer.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return c.stop()
		case <-timer.C:
		case <-c.wake:
		}
		start := time.Now()
		err := c.round(ctx, start)
		if ctx.Err() == nil {
			c.m.round(err)
		}
		switch {
		case ctx.Err() != nil:
			return c.stop()
		case err != nil && !failing:
			c.log.Warn("cluster: round failed; jobs stop when the trust window ends", "err", err)
			failing = true
		case err != nil:
			c.log.Debug("cluster: round failed", "err", err)
		case failing:
			c.log.Info("cluster: rounds succeed again")
			failing = false
		}
		timer.Reset(max(0, c.interval-time.Since(start)))
	}
}

// round is one sharing round; it has its own timeout (LeaseTTL/3).
func (c *Cluster) round(ctx context.Context, start time.Time) error {
	ctx, cancel := context.WithTimeout(ctx, c.interval)
	defer cancel()

	c.mu.Lock()
	trusted := start.Before(c.trustUntil)
	c.mu.Unlock()

	if err := c.register(ctx); err != nil {
		return err
	}
	if err := c.renew(ctx, start); err != nil {
		return err
	}
	members, leases, err := c.read(ctx)
	if err != nil {
		return err
	}
	orphans := c.confirm(leases)
	for _, o := range orphans {
		if err := c.releaseRow(ctx, o.Scope, o.Epoch); err != nil {
			return err
		}
	}

	starting := c.startingAt(start, trusted)
	st := State{Me: c.cfg.NodeID, Roles: c.cfg.Roles, Leases: leases, MaxPartitions: c.cfg.MaxPartitions, Starting: starting}
	for _, m := range members {
		st.Nodes = append(st.Nodes, Node{ID: m.ID, Roles: m.Roles, Starting: m.Starting, MaxPartitions: m.MaxPartitions})
	}
	acts := Plan(st)
	for _, scope := range acts.Release {
		if err := c.release(ctx, scope); err != nil {
			return err
		}
	}
	for _, scope := range acts.Take {
		took, err := c.take(ctx, scope)
		if err != nil {
			return err
		}
		if !took {
			// Another node took it since the read (both were notified
			// of a new table, say): Plan again now rather than stay
			// below the share for a whole interval.
			c.poke()
		}
	}
	if err := c.tend(ctx); err != nil {
		return err
	}

	c.mu.Lock()
	c.members = members
	c.lastOK = start
	c.mu.Unlock()
	return nil
}

// startingAt reports whether the round that started at start is one of the
// node's Starting rounds (docs/design.md §3.3): its first lease_ttl/3 after
// it registered, or after its trust window ended (trusted false: Postgres
// was away for longer than lease_ttl, its row and leases may have expired,
// and back after an outage the first node would otherwise see itself alone
// and take every lease).
func (c *Cluster) startingAt(start time.Time, trusted bool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !trusted || c.firstStart.IsZero() {
		c.firstStart = start
	}
	return start.Before(c.firstStart.Add(c.interval))
}

// register upserts the node row with expires_at = now() + lease_ttl.
func (c *Cluster) register(ctx context.Context) error {
	var inserted bool
	err := c.pool.QueryRow(ctx, sqlNodeUpsert, c.cfg.NodeID, c.cfg.AdvertiseURL, c.cfg.Roles, c.ttlUS, c.instance, c.cfg.MaxPartitions).Scan(&inserted)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%w: %s (waiting for its row to expire)", ErrNodeIDInUse, c.cfg.NodeID)
	}
	if err != nil {
		return fmt.Errorf("cluster: renew node row: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case !c.registered:
		c.log.Info("cluster: registered", "advertise_url", c.cfg.AdvertiseURL)
	case inserted:
		c.log.Warn("cluster: node row had vanished; inserted it again")
	}
	c.registered = true
	return nil
}

// renew extends every held lease in one statement and extends the trust
// window from start. A lease not renewed is lost: its job is cancelled at
// once (reason LossDeleted when its row is gone, LossRenewalMissing
// otherwise).
func (c *Cluster) renew(ctx context.Context, start time.Time) error {
	c.mu.Lock()
	scopes := make([]string, 0, len(c.held))
	epochs := make([]int64, 0, len(c.held))
	for s, h := range c.held {
		scopes = append(scopes, s)
		epochs = append(epochs, h.lease.Epoch)
	}
	c.mu.Unlock()

	renewed := map[string]int64{}
	gone := map[string]bool{}
	if len(scopes) > 0 {
		rows, err := c.pool.Query(ctx, sqlLeasesRenew, c.cfg.NodeID, c.ttlUS, scopes, epochs)
		if err != nil {
			return fmt.Errorf("cluster: renew leases: %w", err)
		}
		var scope string
		var epoch *int64
		var deleted bool
		_, err = pgx.ForEachRow(rows, []any{&scope, &epoch, &deleted}, func() error {
			if epoch != nil {
				renewed[scope] = *epoch
			}
			gone[scope] = deleted
			return nil
		})
		if err != nil {
			return fmt.Errorf("cluster: renew leases: %w", err)
		}
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	// Only this goroutine adds holdings, so c.held is what was renewed.
	for s, h := range c.held {
		if e, ok := renewed[s]; !ok || e != h.lease.Epoch {
			reason := LossRenewalMissing
			if gone[s] {
				reason = LossDeleted
			}
			c.lose(h, reason)
		}
	}
	c.trust(start.Add(c.cfg.LeaseTTL - c.cfg.SafetyMargin))
	return nil
}

// read returns the live members and every lease: the view brought up to
// date with what changed since the previous round (view.go).
func (c *Cluster) read(ctx context.Context) ([]Member, []LeaseState, error) {
	rows, err := c.pool.Query(ctx, sqlNodesLive, c.interval.Microseconds())
	if err != nil {
		return nil, nil, fmt.Errorf("cluster: read nodes: %w", err)
	}
	var members []Member
	var m Member
	_, err = pgx.ForEachRow(rows, []any{&m.ID, &m.AdvertiseURL, &m.Roles, &m.ExpiresAt, &m.Starting, &m.MaxPartitions}, func() error {
		members = append(members, m)
		m = Member{}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("cluster: read nodes: %w", err)
	}
	leases, r, err := c.view.read(ctx, c.pool)
	if err != nil {
		return nil, nil, err
	}
	c.m.read(r)
	return members, leases, nil
}

// confirm reconciles the local holdings with the leases just read. A local
// holding the database no longer shows as this node's at this epoch is
// lost. A holding under this node's id that it does not know of is an
// orphan: a previous process with the same id crashed holding it, or a
// take committed after its statement timed out here. Orphans are returned
// to be released (the next take gives a new epoch, so the jobs of a
// previous process, should one still run, are fenced) and are marked free
// in leases for Plan.
func (c *Cluster) confirm(leases []LeaseState) (orphans []LeaseState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	byScope := make(map[string]LeaseState, len(leases))
	for i, l := range leases {
		byScope[l.Scope] = l
		if _, ok := c.held[l.Scope]; !ok && l.held(c.cfg.NodeID) {
			orphans = append(orphans, l)
			leases[i].Holder, leases[i].Free = "", true
		}
	}
	for s, h := range c.held {
		l, ok := byScope[s]
		switch {
		case !ok: // the view drops a deleted row (its tombstone, view.go)
			c.lose(h, LossDeleted)
		case !l.held(c.cfg.NodeID) || l.Epoch != h.lease.Epoch:
			c.lose(h, LossNotInDatabase)
		}
	}
	return orphans
}

// lose drops a holding that is no longer this node's and cancels its job
// at once, without waiting. reason is one of the Loss* constants. c.mu is
// held.
func (c *Cluster) lose(h *holding, reason string) {
	delete(c.held, h.lease.Scope)
	c.m.lost(h.lease.Kind, reason)
	if h.job != nil {
		h.job.cancel()
	}
	if reason == LossDeleted {
		// mink table delete: expected, not a fault.
		c.log.Info("cluster: lease ended; its table was deleted", leaseAttrs(h.lease)...)
		return
	}
	c.log.Warn("cluster: lease lost", leaseAttrs(h.lease, "reason", reason)...)
}

// release stops the lease's job, waits for it to return, then hands the
// lease back.
func (c *Cluster) release(ctx context.Context, scope string) error {
	c.mu.Lock()
	h := c.held[scope]
	c.mu.Unlock()
	if h == nil {
		return nil
	}
	if h.job != nil {
		h.job.cancel()
		select {
		case <-h.job.done:
		case <-ctx.Done():
			return fmt.Errorf("cluster: release %s: job did not stop: %w", scope, ctx.Err())
		}
	}
	if err := c.releaseRow(ctx, scope, h.lease.Epoch); err != nil {
		return err
	}
	c.mu.Lock()
	if c.held[scope] == h {
		delete(c.held, scope)
		c.m.released(h.lease.Kind)
	}
	c.mu.Unlock()
	c.log.Info("cluster: lease released", leaseAttrs(h.lease)...)
	return nil
}

func (c *Cluster) releaseRow(ctx context.Context, scope string, epoch int64) error {
	if _, err := c.pool.Exec(ctx, sqlLeaseRelease, scope, c.cfg.NodeID, epoch); err != nil {
		return fmt.Errorf("cluster: release %s: %w", scope, err)
	}
	return nil
}

// take takes a lease if it is still free and starts its job; took is
// false when it was no longer free.
func (c *Cluster) take(ctx context.Context, scope string) (took bool, err error) {
	l := Lease{Scope: scope, Holder: c.cfg.NodeID}
	err = c.pool.QueryRow(ctx, sqlLeaseTake, scope, c.cfg.NodeID, c.ttlUS).Scan(&l.TableID, &l.Kind, &l.Partition, &l.Epoch)
	if errors.Is(err, pgx.ErrNoRows) {
		c.log.Debug("cluster: lease no longer free", "scope", scope)
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("cluster: take %s: %w", scope, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	h := &holding{lease: l}
	c.held[scope] = h
	c.m.took(l.Kind)
	c.log.Info("cluster: lease taken", leaseAttrs(l)...)
	if c.trustedLocked() {
		c.startJob(h)
	}
	return true, nil
}

// tend restarts the jobs of held leases that returned (or were stopped
// when the trust window ended), and drops the holdings whose job failed:
// their lease is handed back so that the job starts over under a new epoch.
func (c *Cluster) tend(ctx context.Context) error {
	c.mu.Lock()
	var failed []*holding
	for _, h := range c.held {
		switch {
		case h.job != nil && !h.job.finished():
		case h.job != nil && h.job.failed:
			delete(c.held, h.lease.Scope)
			c.m.lost(h.lease.Kind, LossJobFailed)
			failed = append(failed, h)
		case c.trustedLocked():
			if h.job != nil {
				c.log.Info("cluster: restarting job", leaseAttrs(h.lease)...)
			}
			c.startJob(h)
		}
	}
	c.mu.Unlock()
	for _, h := range failed {
		c.log.Warn("cluster: job failed; dropping the lease", leaseAttrs(h.lease, "err", h.job.err)...)
		if err := c.releaseRow(ctx, h.lease.Scope, h.lease.Epoch); err != nil {
			return err
		}
	}
	return nil
}

// startJob runs the holding's job in a goroutine of its own. c.mu is held.
func (c *Cluster) startJob(h *holding) {
	ctx, cancel := context.WithCancel(c.jobBase)
	j := &job{cancel: cancel, done: make(chan struct{})}
	h.job = j
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer close(j.done)
		err := c.jobs.Run(ctx, h.lease)
		stopped := ctx.Err() != nil
		cancel()
		j.err = err
		j.failed = err != nil && !stopped
		switch {
		case j.failed:
			c.log.Warn("cluster: job returned an error", leaseAttrs(h.lease, "err", err)...)
		case !stopped:
			c.log.Info("cluster: job returned while the lease is held; it restarts next round", leaseAttrs(h.lease)...)
		}
	}()
}

// trust extends the trust window to until and arms the timer that stops
// every job when it ends. c.mu is held.
func (c *Cluster) trust(until time.Time) {
	if until.Before(c.trustUntil) {
		return
	}
	c.trustUntil = until
	d := time.Until(until)
	if c.trustTimer == nil {
		c.trustTimer = time.AfterFunc(d, c.distrust)
		return
	}
	c.trustTimer.Reset(d)
}

func (c *Cluster) trustedLocked() bool { return time.Now().Before(c.trustUntil) }

// distrust stops every job when the trust window has ended: the node can
// no longer be sure that its leases have not expired.
func (c *Cluster) distrust() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.trustedLocked() {
		return // extended meanwhile
	}
	n := 0
	for _, h := range c.held {
		if h.job != nil && !h.job.finished() {
			h.job.cancel()
			c.m.lapses.WithLabelValues(h.lease.Kind).Inc()
			n++
		}
	}
	if n > 0 {
		c.log.Warn("cluster: trust window ended without a renewal; jobs stopped", "jobs", n)
	}
}

// stop ends Run: it stops every job and waits for them, then (unless
// crashing) releases every lease and deletes the node row.
func (c *Cluster) stop() error {
	c.mu.Lock()
	if c.trustTimer != nil {
		c.trustTimer.Stop()
		c.trustTimer = nil
	}
	c.trustUntil = time.Time{}
	for _, h := range c.held {
		if h.job != nil {
			h.job.cancel()
		}
	}
	c.mu.Unlock()
	c.wg.Wait()

	c.mu.Lock()
	held := c.held
	registered := c.registered
	c.held = map[string]*holding{}
	c.registered = false
	c.mu.Unlock()
	// released holds the holdings the final release handed back; the
	// others are counted as abandoned (left to expire).
	released := map[string]int64{}
	defer func() {
		for s, h := range held {
			if e, ok := released[s]; ok && e == h.lease.Epoch {
				c.m.released(h.lease.Kind)
			} else {
				c.m.lost(h.lease.Kind, LossAbandoned)
			}
		}
	}()
	if !registered {
		// Never registered (for example another live process has this
		// node id): the leases and the row under this id are not ours.
		c.log.Info("cluster: stopped (never registered)")
		return nil
	}
	if c.crash.Load() {
		c.log.Warn("cluster: crashed (test): leases and node row left to expire")
		return nil
	}

	ctx, cancel := context.WithTimeout(context.Background(), min(c.cfg.LeaseTTL, stopTimeout))
	defer cancel()
	var errs []error
	rows, err := c.pool.Query(ctx, sqlLeasesReleaseAll, c.cfg.NodeID)
	if err == nil {
		var scope string
		var epoch int64
		_, err = pgx.ForEachRow(rows, []any{&scope, &epoch}, func() error {
			released[scope] = epoch
			c.log.Info("cluster: lease released", "scope", scope, "epoch", epoch)
			return nil
		})
	}
	if err != nil {
		errs = append(errs, fmt.Errorf("cluster: release leases at stop (%d held): %w", len(held), err))
	}
	if _, err := c.pool.Exec(ctx, sqlNodeDelete, c.cfg.NodeID, c.instance); err != nil {
		errs = append(errs, fmt.Errorf("cluster: delete node row: %w", err))
	}
	if err := errors.Join(errs...); err != nil {
		c.log.Error("cluster: stop: leases and row left to expire", "err", err)
		return err
	}
	c.log.Info("cluster: stopped")
	return nil
}

// Members returns the live nodes of the last successful round. It keeps
// that view while rounds fail (Postgres down), so that forwarding to owners
// (docs/design.md §3.5) keeps working.
func (c *Cluster) Members() []Member {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Member, len(c.members))
	for i, m := range c.members {
		m.Roles = slices.Clone(m.Roles)
		out[i] = m
	}
	return out
}

// Ready reports whether the node is registered and its last successful
// round started less than LeaseTTL ago.
func (c *Cluster) Ready() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.registered && !c.lastOK.IsZero() && time.Since(c.lastOK) < c.cfg.LeaseTTL
}

// Held returns the leases this node holds, ordered by scope.
func (c *Cluster) Held() []Lease {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Lease, 0, len(c.held))
	for _, h := range c.held {
		out = append(out, h.lease)
	}
	slices.SortFunc(out, func(a, b Lease) int { return cmp.Compare(a.Scope, b.Scope) })
	return out
}

// NodeID returns the node's id.
func (c *Cluster) NodeID() string { return c.cfg.NodeID }

func leaseAttrs(l Lease, more ...any) []any {
	attrs := []any{"scope", l.Scope, "epoch", l.Epoch, "table", l.TableID, "kind", l.Kind}
	if l.Kind == KindPartition {
		attrs = append(attrs, "partition", l.Partition)
	}
	return append(attrs, more...)
}

// newInstance returns a random token that tells this process's node row
// from another process's with the same node id.
func newInstance() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
