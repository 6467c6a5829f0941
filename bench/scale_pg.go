package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/minkhq/mink/cluster"
	"github.com/minkhq/mink/pgstore"
)

// This file is the Postgres half of the scale scenario: real cluster loops
// (cluster.New and Run, in this process, each node with a pgx pool of its
// own) against a real Postgres, with a pgx query tracer on each pool that
// counts the node's statements and the rows they return or change.

// pgShape is one Postgres measurement: real nodes running the cluster
// loop, placeholder node rows that never act (they only make the shares
// those of a larger cluster), and the lease table.
type pgShape struct {
	real, placeholders, tables, partitions int
	// ttl is the lease_ttl of the real nodes (short, to fit many rounds).
	ttl time.Duration
}

func (s pgShape) nodes() int  { return s.real + s.placeholders }
func (s pgShape) leases() int { return s.tables * (s.partitions + 1) }

// stmtKinds are the statements of the cluster loop (cluster/sql/*.sql).
var stmtKinds = []string{"node_upsert", "leases_renew", "nodes_live", "leases_changes", "leases_read", "lease_take",
	"lease_release", "leases_release_all", "node_delete", "other"}

// stmtFragments name the cluster statements by a fragment of their text,
// in the order they are tried: a later fragment also matches statements
// named earlier.
var stmtFragments = []struct{ fragment, kind string }{
	{"INSERT INTO nodes", "node_upsert"},
	{"DELETE FROM nodes", "node_delete"},
	{"FROM nodes", "nodes_live"},
	{"unnest(", "leases_renew"},
	{"epoch = epoch + 1", "lease_take"},
	{"WHERE scope = $1 AND holder = $2", "lease_release"},
	{"WHERE holder = $1", "leases_release_all"},
	{"pg_current_snapshot()", "leases_changes"},
	{"FROM leases", "leases_read"},
}

// stmtKind names the cluster statement sql is (stmtFragments), or "other".
func stmtKind(sql string) string {
	for _, f := range stmtFragments {
		if strings.Contains(sql, f.fragment) {
			return f.kind
		}
	}
	return "other"
}

// stmtCount is what one kind of statement did.
type stmtCount struct {
	// n counts the statements.
	n int64
	// read counts the rows SELECTs returned.
	read int64
	// written counts the rows INSERT, UPDATE and DELETE changed (rows an
	// UPDATE … RETURNING returns are the rows it changed).
	written int64
	// time adds up the statements' durations as the client saw them.
	time time.Duration
}

// stmtCounts is a snapshot of a tracer, by statement kind.
type stmtCounts map[string]stmtCount

func (c stmtCounts) add(o stmtCounts) stmtCounts {
	out := maps.Clone(c)
	if out == nil {
		out = stmtCounts{}
	}
	for k, w := range o {
		v := out[k]
		out[k] = stmtCount{n: v.n + w.n, read: v.read + w.read, written: v.written + w.written, time: v.time + w.time}
	}
	return out
}

func (c stmtCounts) total() stmtCount {
	var t stmtCount
	for _, v := range c {
		t.n, t.read, t.written, t.time = t.n+v.n, t.read+v.read, t.written+v.written, t.time+v.time
	}
	return t
}

// rounds is the number of rounds counted: each round starts with the
// node row upsert.
func (c stmtCounts) rounds() int64 { return c["node_upsert"].n }

// moves counts the takes and releases (the statements a converged
// cluster does not make).
func (c stmtCounts) moves() int64 { return c["lease_take"].n + c["lease_release"].n }

// stmtTracer is a pgx.QueryTracer that counts a pool's statements round
// by round: a round starts with the node row upsert, and a statement
// counts in the round in which it started.
type stmtTracer struct {
	mu     sync.Mutex
	rounds []stmtCounts // rounds[0]: statements before the first round
}

type stmtTraceKey struct{}

type stmtTraceStart struct {
	kind  string
	round int
	at    time.Time
}

// TraceQueryStart implements pgx.QueryTracer.
func (t *stmtTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	kind := stmtKind(d.SQL)
	t.mu.Lock()
	if len(t.rounds) == 0 || kind == "node_upsert" {
		t.rounds = append(t.rounds, stmtCounts{})
	}
	round := len(t.rounds) - 1
	t.mu.Unlock()
	return context.WithValue(ctx, stmtTraceKey{}, stmtTraceStart{kind: kind, round: round, at: time.Now()})
}

// TraceQueryEnd implements pgx.QueryTracer.
func (t *stmtTracer) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryEndData) {
	st, ok := ctx.Value(stmtTraceKey{}).(stmtTraceStart)
	if !ok {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.rounds[st.round][st.kind]
	c.n++
	c.time += time.Since(st.at)
	if d.Err == nil {
		rows := d.CommandTag.RowsAffected()
		if d.CommandTag.Select() {
			c.read += rows
		} else {
			c.written += rows
		}
	}
	t.rounds[st.round][st.kind] = c
}

// started returns the number of rounds started so far.
func (t *stmtTracer) started() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.rounds)
}

// sum adds up the counts of rounds [from, to).
func (t *stmtTracer) sum(from, to int) stmtCounts {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out stmtCounts
	for _, r := range t.rounds[max(0, from):min(to, len(t.rounds))] {
		out = out.add(r)
	}
	return out
}

// idleJobs runs no work under a lease: the job waits until it is stopped.
type idleJobs struct{}

func (idleJobs) Run(ctx context.Context, _ cluster.Lease) error {
	<-ctx.Done()
	return nil
}

// pgNode is one real node of the measurement.
type pgNode struct {
	id     string
	pool   *pgxpool.Pool
	tracer *stmtTracer
	// reg holds the node's cluster metrics: the lease read's rows by kind.
	reg    *prometheus.Registry
	cancel context.CancelFunc
	done   chan error
	gone   bool
}

// startPGNode starts a cluster loop for node id on its own pool of url.
func startPGNode(ctx context.Context, url, id string, ttl time.Duration) (*pgNode, error) {
	pcfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	pcfg.MaxConns = 2
	tr := &stmtTracer{}
	pcfg.ConnConfig.Tracer = tr
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, err
	}
	// Tens of nodes: their log lines would drown the report.
	reg := prometheus.NewRegistry()
	c, err := cluster.New(pool, cluster.Config{NodeID: id, AdvertiseURL: "http://" + id, LeaseTTL: ttl,
		Registerer: reg, Logger: slog.New(slog.DiscardHandler)}, idleJobs{})
	if err != nil {
		pool.Close()
		return nil, err
	}
	rctx, cancel := context.WithCancel(context.Background())
	n := &pgNode{id: id, pool: pool, tracer: tr, reg: reg, cancel: cancel, done: make(chan error, 1)}
	go func() { n.done <- c.Run(rctx) }()
	return n, nil
}

// readRows returns the rows the node's lease reads returned so far, by
// what (mink_cluster_lease_read_rows_total: lease, deleted, expired).
func (n *pgNode) readRows() map[string]float64 {
	out := map[string]float64{}
	mfs, err := n.reg.Gather()
	if err != nil {
		return out
	}
	for _, mf := range mfs {
		if mf.GetName() != "mink_cluster_lease_read_rows_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "what" {
					out[l.GetValue()] = m.GetCounter().GetValue()
				}
			}
		}
	}
	return out
}

// stop stops the node cleanly (it releases its leases and deletes its row).
func (n *pgNode) stop() error {
	if n.gone {
		return nil
	}
	n.gone = true
	n.cancel()
	err := <-n.done
	n.pool.Close()
	return err
}

// crash stops the node as a crash would leave it: its pool is closed
// first, so its final statements fail and its leases and node row are
// left to expire.
func (n *pgNode) crash() {
	if n.gone {
		return
	}
	n.gone = true
	n.pool.Close()
	n.cancel()
	<-n.done // the release at stop fails on the closed pool: expected
}

// pgCluster is the real nodes of one measurement on a fresh schema.
type pgCluster struct {
	shape pgShape
	admin *pgxpool.Pool
	url   string
	nodes []*pgNode
}

// newPGCluster migrates a fresh schema, creates the tables with their
// leases and the placeholder node rows, and starts the real nodes one
// after the other (within a few milliseconds). started is when the first
// one started.
func newPGCluster(ctx context.Context, h *H, shape pgShape) (pc *pgCluster, started time.Time, err error) {
	url, err := h.Postgres(ctx)
	if err != nil {
		return nil, started, err
	}
	admin, err := pgstore.Open(ctx, pgstore.Config{URL: url, MaxConns: 2})
	if err != nil {
		return nil, started, err
	}
	pc = &pgCluster{shape: shape, admin: admin, url: url}
	stmts := []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO tables (namespace, name, topic, value_format, schema_json, table_uuid, location, metadata_location)
		  SELECT 'bench', 't' || g, 't' || g, 'json', '{}', gen_random_uuid(), 's3://bench/t' || g,
		         's3://bench/t' || g || '/metadata/0.json'
		  FROM generate_series(1, $1::int) g`, []any{shape.tables}},
		{`INSERT INTO leases (scope, table_id, kind, partition)
		  SELECT t.id || '/partition/' || p, t.id, 'partition', p FROM tables t, generate_series(0, $1::int - 1) p`,
			[]any{shape.partitions}},
		{`INSERT INTO leases (scope, table_id, kind) SELECT t.id || '/writer', t.id, 'writer' FROM tables t`, nil},
		{`INSERT INTO nodes (id, instance, advertise_url, roles, expires_at)
		  SELECT 'idle-' || lpad(g::text, 3, '0'), 'bench', 'http://idle', ARRAY['indexer', 'server'], now() + interval '1 hour'
		  FROM generate_series(1, $1::int) g`, []any{shape.placeholders}},
	}
	for _, s := range stmts {
		if _, err := admin.Exec(ctx, s.sql, s.args...); err != nil {
			admin.Close()
			return nil, started, fmt.Errorf("scale: set up: %w", err)
		}
	}
	started = time.Now()
	for i := range shape.real {
		n, err := startPGNode(ctx, url, fmt.Sprintf("real-%02d", i), shape.ttl)
		if err != nil {
			pc.close()
			return nil, started, err
		}
		pc.nodes = append(pc.nodes, n)
	}
	return pc, started, nil
}

// close stops every node cleanly and drops the admin pool.
func (pc *pgCluster) close() error {
	var errs []error
	for _, n := range pc.nodes {
		if err := n.stop(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", n.id, err))
		}
	}
	pc.admin.Close()
	return errors.Join(errs...)
}

// marks returns, for each running node, the rounds it has started.
func (pc *pgCluster) marks() map[string]int {
	out := map[string]int{}
	for _, n := range pc.nodes {
		if !n.gone {
			out[n.id] = n.tracer.started()
		}
	}
	return out
}

// sumRounds adds up the statements of the running nodes' rounds that
// started after from and before to (marks), so only whole rounds count.
func (pc *pgCluster) sumRounds(from, to map[string]int) stmtCounts {
	var out stmtCounts
	for _, n := range pc.nodes {
		if f, ok := from[n.id]; ok && !n.gone {
			out = out.add(n.tracer.sum(f, to[n.id]-1))
		}
	}
	return out
}

// converged reports whether the lease table is a fixpoint of the rules as
// seen from the database: no live node above the share of a table, each
// writer lease held by its top node (free when that is a placeholder), and
// every real node within one lease of the mean.
func (pc *pgCluster) converged(ctx context.Context) (bool, error) {
	var live, real []string
	rows, err := pc.admin.Query(ctx, `SELECT id FROM nodes WHERE expires_at > now() AND 'indexer' = ANY (roles) ORDER BY id`)
	if err != nil {
		return false, err
	}
	var id string
	if _, err := pgx.ForEachRow(rows, []any{&id}, func() error {
		live = append(live, id)
		if strings.HasPrefix(id, "real-") {
			real = append(real, id)
		}
		return nil
	}); err != nil {
		return false, err
	}
	if len(live) == 0 {
		return false, nil
	}
	type tableState struct {
		parts, free int
		held        map[string]int
	}
	tables := map[int64]*tableState{}
	writers := map[string]string{} // scope → holder ("" when free)
	rows, err = pc.admin.Query(ctx, `SELECT scope, table_id, kind, coalesce(holder, ''),
		(holder IS NULL OR expires_at IS NULL OR expires_at < now()) FROM leases`)
	if err != nil {
		return false, err
	}
	var scope, kind, holder string
	var table int64
	var free bool
	if _, err := pgx.ForEachRow(rows, []any{&scope, &table, &kind, &holder, &free}, func() error {
		if free {
			holder = ""
		}
		if kind == cluster.KindWriter {
			writers[scope] = holder
			return nil
		}
		t := tables[table]
		if t == nil {
			t = &tableState{held: map[string]int{}}
			tables[table] = t
		}
		t.parts++
		if holder == "" {
			t.free++
		} else {
			t.held[holder]++
		}
		return nil
	}); err != nil {
		return false, err
	}
	isReal := map[string]bool{}
	for _, n := range real {
		isReal[n] = true
	}
	// Every running node has registered; a crashed one's row has expired.
	for _, n := range pc.nodes {
		if isReal[n.id] == n.gone {
			return false, nil
		}
	}
	for _, t := range tables {
		sh := ceilDiv(t.parts, len(live))
		for n, c := range t.held {
			if c > sh || !isReal[n] {
				return false, nil
			}
		}
	}
	// Balanced bounds (docs/design.md §3.3): a converged real node holds
	// floor or ceil(all partitions / live indexing nodes); the free
	// partitions are those in the placeholders' bounds.
	all, held := 0, map[string]int{}
	for _, t := range tables {
		all += t.parts
		for n, c := range t.held {
			held[n] += c
		}
	}
	for _, n := range real {
		if held[n] < all/len(live) || held[n] > ceilDiv(all, len(live)) {
			return false, nil
		}
	}
	for scope, holder := range writers {
		want := topOf(live, scope)
		if !isReal[want] {
			want = ""
		}
		if holder != want {
			return false, nil
		}
	}
	return true, nil
}

// waitConverged polls the lease table until it has converged and returns
// how long that took from since.
func (pc *pgCluster) waitConverged(ctx context.Context, since time.Time, within time.Duration) (time.Duration, error) {
	deadline := time.Now().Add(within)
	for {
		ok, err := pc.converged(ctx)
		if err != nil {
			return 0, err
		}
		if ok {
			return time.Since(since), nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("scale: the real nodes did not converge within %v", within)
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// steady returns the running nodes' statements over the whole rounds they
// run in about rounds round periods of a converged cluster (c.rounds()
// counts them). Takes or releases meanwhile are noted, not fatal.
func (pc *pgCluster) steady(ctx context.Context, h *H, rounds int) (stmtCounts, error) {
	before := pc.marks()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(time.Duration(rounds+1) * pc.shape.ttl / 3):
	}
	c := pc.sumRounds(before, pc.marks())
	if m := c.moves(); m > 0 {
		// A round that overran its timeout on a loaded machine can let a
		// lease expire; say so rather than fail the scenario.
		h.Note("Warning: %d takes or releases during the steady rounds of a converged cluster (%s); its figures include them.",
			m, describeCounts(c))
	}
	return c, nil
}

// perRound returns x per node per round of c.
func perRound(x int64, c stmtCounts) float64 {
	if c.rounds() == 0 {
		return 0
	}
	return float64(x) / float64(c.rounds())
}

// scalePostgres measures the cluster loop's statements against a real
// Postgres: part A, 30 real nodes on a small lease table (cold start,
// steady state, a join, a crash); part B, 30 real nodes on a lease table
// of the simulated size with placeholder node rows making the shares those
// of sim.nodes nodes (a steady round at full size). It extrapolates A to
// sim's size. cold is nil when the simulation did not run.
func scalePostgres(ctx context.Context, h *H, sim scaleShape, cold *simColdStarts) error {
	a := pgShape{real: 30, tables: 20, partitions: 50, ttl: 1500 * time.Millisecond}
	b := pgShape{real: 30, placeholders: sim.nodes - 30, tables: sim.tables, partitions: sim.partitions, ttl: 3 * time.Second}
	if h.Quick {
		a.tables = 5
	}
	an := fmt.Sprintf("%d real nodes, %d tables × %d partitions, lease_ttl %v", a.real, a.tables, a.partitions, a.ttl)
	bn := fmt.Sprintf("%d real nodes + %d placeholder node rows, %d tables × %d partitions, lease_ttl %v",
		b.real, b.placeholders, b.tables, b.partitions, b.ttl)
	en := fmt.Sprintf("extrapolated to %s, lease_ttl 30 s", sim)
	bound := "rows the node's lease reads returned over the whole event ÷ (its rounds (one snapshot row each) + the lease rows " +
		"every node took or released meanwhile + the expired holdings its reads returned); ≤ 1: it read nothing that did not change"

	h.Figure(Figure{Name: "A: statements per round per node", Unit: "statements", Note: "measured, converged, " + an})
	h.Figure(Figure{Name: "A: rows read per round per node", Unit: "rows", Note: "rows the SELECTs returned (live nodes + the lease read)"})
	h.Figure(Figure{Name: "A: lease rows read per round per node", Unit: "rows",
		Note: "rows the lease read returned (a snapshot row + what changed); the renewal returns the node's own leases besides"})
	h.Figure(Figure{Name: "A: rows written per round per node", Unit: "rows", Note: "rows the INSERT/UPDATEs changed"})
	h.Figure(Figure{Name: "A: Postgres time per round per node", Unit: "ms", Note: "statement latencies added up, as the client sees them"})
	h.Figure(Figure{Name: "A: cold start: rounds to converge", Unit: "rounds",
		Note: "the nodes start one after the other within milliseconds (a rolling start); time from the first start to a converged lease table / (lease_ttl/3)"})
	h.Figure(Figure{Name: "A: cold start: statements per node", Unit: "statements", Note: "from start to converged"})
	h.Figure(Figure{Name: "A: join: lease rows read per round per node", Unit: "rows",
		Note: "one more node starts; from its start to a converged lease table + one round; the nodes already running"})
	h.Figure(Figure{Name: "A: join: lease rows changed per round", Unit: "rows", Note: "takes and releases of all nodes in that time ÷ the rounds of one node"})
	h.Figure(Figure{Name: "A: join: lease rows read ÷ what changed, most of any node", Unit: "ratio", Max: 1, Note: bound})
	h.Figure(Figure{Name: "A: crash: rounds to converge", Unit: "rounds",
		Note: "time from a crash (pool closed) to a converged lease table / (lease_ttl/3); includes the lease_ttl expiry (3 rounds)"})
	h.Figure(Figure{Name: "A: crash: lease rows read per round per node", Unit: "rows", Note: "from the crash to a converged lease table + one round"})
	h.Figure(Figure{Name: "A: crash: lease rows changed per round", Unit: "rows", Note: "takes and releases of all nodes in that time ÷ the rounds of one node"})
	h.Figure(Figure{Name: "A: crash: lease rows read ÷ what changed, most of any node", Unit: "ratio", Max: 1, Note: bound})
	h.Figure(Figure{Name: "B: statements per round per node", Unit: "statements", Note: "measured once, converged, " + bn})
	h.Figure(Figure{Name: "B: rows read per round per node", Unit: "rows"})
	h.Figure(Figure{Name: "B: lease rows read per round per node", Unit: "rows"})
	h.Figure(Figure{Name: "B: rows written per round per node", Unit: "rows"})
	h.Figure(Figure{Name: "B: Postgres time per round per node", Unit: "ms"})
	h.Figure(Figure{Name: "extrapolated: statements per second, whole cluster", Unit: "statements/s", Note: en})
	h.Figure(Figure{Name: "extrapolated: rows read per second, whole cluster", Unit: "rows/s", Note: en})
	h.Figure(Figure{Name: "extrapolated: rows written per second, whole cluster", Unit: "rows/s", Note: en})
	if cold != nil {
		h.Figure(Figure{Name: "extrapolated: cold start, all nodes live: statements, whole cluster", Unit: "statements",
			Note: "the simulation's takes and releases + its node rounds × the statements per round of A"})
		h.Figure(Figure{Name: "extrapolated: cold start, rolling: statements, whole cluster", Unit: "statements",
			Note: "the same for the rolling cold start"})
	}
	h.Note("Before (lease reads of every row every round, bench/RESULTS.md of 84e0850): A (10 real nodes, 20 × 50, lease_ttl 900ms) " +
		"read 1030 rows per round per node (leases_read 1020, nodes_live 10) in 4 statements, 2.59 ms; B (10 real + 90 placeholder " +
		"nodes, 200 × 50) read 10300 rows per round per node, 15.9 ms; extrapolated to 100 nodes: 103,000 rows read per second, " +
		"1030 written, 40 statements per second.")

	// A run of A takes about 40 s, B about 30 s: A runs at most 3 times,
	// B once.
	for run := range min(h.Runs, 3) {
		start := time.Now()
		ca, err := scalePGPartA(ctx, h, a, run == 0)
		if err != nil {
			return fmt.Errorf("part A: %w", err)
		}
		if run == 0 {
			cb, err := scalePGPartB(ctx, h, b)
			if err != nil {
				return fmt.Errorf("part B: %w", err)
			}
			h.Note("Postgres load (B) measured with %s: per statement kind over the steady rounds: %s.", bn, describeCounts(cb))
		}
		// Extrapolation: statements per round per node do not depend on
		// the size (one each of upsert, renew, nodes_live,
		// leases_changes); the rows nodes_live returns grow with the
		// nodes, the lease read's with what changed (one snapshot row in
		// a steady round), those a renewal changes with the leases per
		// node; each round upserts one node row.
		steady := ca.steady
		nodesA, leasesA := float64(a.nodes()), float64(a.leases())
		nodesS, leasesS := float64(sim.nodes), float64(sim.leases())
		perSec := nodesS / scaleRound.Seconds() // node-rounds per second, whole cluster
		stmts := perRound(steady.total().n, steady)
		read := perRound(steady["leases_changes"].read, steady) + perRound(steady["nodes_live"].read, steady)*nodesS/nodesA
		written := perRound(steady["node_upsert"].written, steady) +
			perRound(steady["leases_renew"].written, steady)*(leasesS/nodesS)/(leasesA/nodesA)
		h.Add("extrapolated: statements per second, whole cluster", stmts*perSec)
		h.Add("extrapolated: rows read per second, whole cluster", read*perSec)
		h.Add("extrapolated: rows written per second, whole cluster", written*perSec)
		if cold != nil {
			// A cold start makes the simulation's take and release
			// statements plus the steady statements of every node round
			// until converged.
			h.Add("extrapolated: cold start, all nodes live: statements, whole cluster",
				float64(cold.allLive.moves())+stmts*float64(cold.allLive.nodeRounds))
			h.Add("extrapolated: cold start, rolling: statements, whole cluster",
				float64(cold.rolling.moves())+stmts*float64(cold.rolling.nodeRounds))
		}
		if run == 0 {
			h.Note("Postgres load (A) measured with %s: per statement kind over the steady rounds: %s.", an, describeCounts(steady))
			h.Note("Extrapolation (not measured at %d nodes): statements per round per node stay the same "+
				"(node_upsert, leases_renew, nodes_live, leases_changes); in a steady round the lease read returns one row "+
				"(its snapshot) whatever the size, nodes_live returns the live nodes; rows written are one node row plus the "+
				"leases the node holds (renewal). Whole cluster = per node × %d nodes / 10 s. B checks the per-node figures on a "+
				"lease table of the full size.", sim.nodes, sim.nodes)
		}
		h.Logf("postgres run %d took %v", run+1, time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// pgPartA is what part A measured.
type pgPartA struct {
	steady, cold stmtCounts
}

func scalePGPartA(ctx context.Context, h *H, s pgShape, first bool) (pgPartA, error) {
	var out pgPartA
	round := s.ttl / 3
	pc, start, err := newPGCluster(ctx, h, s)
	if err != nil {
		return out, err
	}
	defer pc.close()
	took, err := pc.waitConverged(ctx, start, 100*s.ttl)
	if err != nil {
		return out, fmt.Errorf("cold start: %w", err)
	}
	for _, n := range pc.nodes {
		out.cold = out.cold.add(n.tracer.sum(0, n.tracer.started()))
	}
	h.Add("A: cold start: rounds to converge", took.Seconds()/round.Seconds())
	h.Add("A: cold start: statements per node", float64(out.cold.total().n)/float64(s.real))

	// Let the last takes' rounds finish, then measure converged rounds.
	time.Sleep(round)
	out.steady, err = pc.steady(ctx, h, 8)
	if err != nil {
		return out, err
	}
	t := out.steady.total()
	h.Add("A: statements per round per node", perRound(t.n, out.steady))
	h.Add("A: rows read per round per node", perRound(t.read, out.steady))
	h.Add("A: lease rows read per round per node", perRound(out.steady["leases_changes"].read, out.steady))
	h.Add("A: rows written per round per node", perRound(t.written, out.steady))
	h.Add("A: Postgres time per round per node", perRound(t.time.Microseconds(), out.steady)/1e3)
	if first {
		// The statistics reach pg_stat_user_tables within a second or so.
		time.Sleep(time.Second)
		var upd, hot int64
		if err := pc.admin.QueryRow(ctx, `SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relid = 'leases'::regclass`).
			Scan(&upd, &hot); err == nil && upd > 0 {
			h.Note("Lease row updates (A, from the start to the end of the steady rounds, pg_stat_user_tables): %d, of which "+
				"%.0f%% in place (HOT): no index holds expires_at, which renewals move (migration 012).",
				upd, 100*float64(hot)/float64(upd))
		}
	}

	// A join: the joiner's first read is a full one, by design; the
	// others read what the join moves.
	ev := pc.event()
	joined := time.Now()
	n, err := startPGNode(ctx, pc.url, fmt.Sprintf("real-%02d", len(pc.nodes)), s.ttl)
	if err != nil {
		return out, err
	}
	pc.nodes = append(pc.nodes, n)
	if _, err := pc.waitConverged(ctx, joined, 40*s.ttl); err != nil {
		return out, fmt.Errorf("join: %w", err)
	}
	time.Sleep(round)
	r := ev.end(pc, n.id)
	h.Add("A: join: lease rows read per round per node", r.readPerRound)
	h.Add("A: join: lease rows changed per round", r.changedPerRound)
	h.Add("A: join: lease rows read ÷ what changed, most of any node", r.worst)
	if first {
		h.Note("Join (A): %s.", r)
	}

	ev = pc.event()
	crashed := time.Now()
	pc.nodes[0].crash()
	took, err = pc.waitConverged(ctx, crashed, 20*s.ttl)
	if err != nil {
		return out, fmt.Errorf("crash: %w", err)
	}
	h.Add("A: crash: rounds to converge", took.Seconds()/round.Seconds())
	time.Sleep(round)
	r = ev.end(pc, "")
	h.Add("A: crash: lease rows read per round per node", r.readPerRound)
	h.Add("A: crash: lease rows changed per round", r.changedPerRound)
	h.Add("A: crash: lease rows read ÷ what changed, most of any node", r.worst)
	if first {
		h.Note("Crash (A): %s.", r)
	}
	return out, pc.close()
}

// pgEvent marks the start of an event (a join, a crash) on every running
// node: its rounds and its lease read's rows so far.
type pgEvent struct {
	marks map[string]int
	rows  map[string]map[string]float64
}

func (pc *pgCluster) event() pgEvent {
	e := pgEvent{marks: pc.marks(), rows: map[string]map[string]float64{}}
	for _, n := range pc.nodes {
		if !n.gone {
			e.rows[n.id] = n.readRows()
		}
	}
	return e
}

// pgEventReads is what the nodes read during an event.
type pgEventReads struct {
	nodes                         int
	readPerRound, changedPerRound float64
	changed, expired              float64
	// worst is the highest ratio of a node's lease rows read to its bound
	// (its rounds + the lease rows changed + the expired holdings it read).
	worst     float64
	worstNode string
}

func (r pgEventReads) String() string {
	return fmt.Sprintf("%d nodes read %.1f lease rows per round each while %.0f lease rows were taken or released (%.1f per round) "+
		"and their reads returned %.0f expired holdings in all; the highest ratio of a node's lease rows read to its rounds + "+
		"the rows changed + its expired holdings is %.2f (%s)", r.nodes, r.readPerRound, r.changed, r.changedPerRound, r.expired,
		r.worst, r.worstNode)
}

// end sums the event up to now over the nodes running at its start and
// still running, but skip (a joiner: its first read is a full read). The
// lease rows changed are the rows every node's takes and releases wrote
// in the rounds the event spans.
func (e pgEvent) end(pc *pgCluster, skip string) pgEventReads {
	to := pc.marks()
	var r pgEventReads
	var rounds, read float64
	for _, n := range pc.nodes {
		c := n.tracer.sum(e.marks[n.id], n.tracer.started())
		r.changed += float64(c["lease_take"].written + c["lease_release"].written + c["leases_release_all"].written)
	}
	type nodeReads struct {
		id                    string
		rounds, read, expired float64
	}
	var ns []nodeReads
	for _, n := range pc.nodes {
		f, ok := e.marks[n.id]
		if !ok || n.gone || n.id == skip {
			continue
		}
		c := n.tracer.sum(f, to[n.id]-1)
		rows := n.readRows()
		ns = append(ns, nodeReads{id: n.id, rounds: float64(c.rounds()), read: float64(c["leases_changes"].read),
			expired: rows["expired"] - e.rows[n.id]["expired"]})
	}
	for _, n := range ns {
		rounds += n.rounds
		read += n.read
		r.expired += n.expired
		if n.rounds == 0 {
			continue
		}
		if w := n.read / (n.rounds + r.changed + n.expired); w > r.worst {
			r.worst, r.worstNode = w, n.id
		}
	}
	r.nodes = len(ns)
	if rounds > 0 {
		r.readPerRound = read / rounds
		r.changedPerRound = r.changed / (rounds / float64(len(ns)))
	}
	return r
}

func scalePGPartB(ctx context.Context, h *H, s pgShape) (stmtCounts, error) {
	pc, start, err := newPGCluster(ctx, h, s)
	if err != nil {
		return nil, err
	}
	defer pc.close()
	if _, err := pc.waitConverged(ctx, start, 20*s.ttl); err != nil {
		return nil, fmt.Errorf("cold start: %w", err)
	}
	time.Sleep(s.ttl / 3)
	c, err := pc.steady(ctx, h, 3)
	if err != nil {
		return nil, err
	}
	t := c.total()
	h.Add("B: statements per round per node", perRound(t.n, c))
	h.Add("B: rows read per round per node", perRound(t.read, c))
	h.Add("B: lease rows read per round per node", perRound(c["leases_changes"].read, c))
	h.Add("B: rows written per round per node", perRound(t.written, c))
	h.Add("B: Postgres time per round per node", perRound(t.time.Microseconds(), c)/1e3)
	return c, pc.close()
}

// describeCounts lists per statement kind its count, rows and mean
// latency per round per node.
func describeCounts(c stmtCounts) string {
	var parts []string
	for _, k := range stmtKinds {
		v, ok := c[k]
		if !ok || v.n == 0 {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %.2g/round (%.0f rows read, %.0f written, %.2f ms each)", k,
			perRound(v.n, c), perRound(v.read, c), perRound(v.written, c), float64(v.time.Microseconds())/1e3/float64(v.n)))
	}
	return strings.Join(parts, "; ")
}
