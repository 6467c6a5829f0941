package main

import (
	"context"
	"fmt"
	"os"
	"time"
)

// The scale scenario (issue scenario 4): how the cluster rules of design
// §3.3 behave with 100 nodes and 10,000 partitions over 200 tables. The
// rounds to converge come from a simulation that drives cluster.Plan
// (scale_sim.go); the Postgres statements and rows per round come from
// real cluster loops against a real Postgres (scale_pg.go), 30 nodes, then
// extrapolated.

func init() {
	register(Scenario{
		Name:  "scale",
		Title: "Scale of the cluster rules",
		About: `Simulation of the sharing rounds of docs/design.md §3.3 (the real cluster.Plan against an in-memory
lease table where a take succeeds only while the lease is free) for 100 indexing nodes and 200 tables × 50
partitions (10,000 partition leases + 200 writer leases), lease_ttl 30 s: time is simulated in milliseconds,
each node runs a round every 10 s at its own phase (its start + k × 10 s), atomic at its instant (register,
renew, read, Plan, release, take), and is Starting for its first 10 s; a crashed node runs no rounds and its
row and leases expire lease_ttl after its last one. Scenarios: a rolling cold start (node i starts at i s),
a cold start with every node live at once, a join into the stable cluster, and a crash of the most loaded
node right after one of its rounds. "Rounds" = the time from the event to the last take or release in
rounds of 10 s, rounded up, once stable (no node Starting, no expiry pending, a whole round without a move;
then every lease is checked held by a running node, none above a table's share, each writer at its top
node); "longest unheld" = the longest time a partition lease was free or held by a crashed node, since the
event. Seeds 1–3 (at most 3 runs). Then real cluster loops
(cluster.New/Run, in-process,
each with its own pgx pool whose query tracer counts statements and the rows they return or change)
against a real Postgres: A, 30 nodes on 20 tables × 50 partitions with a short lease_ttl (at most 3
runs): a rolling cold start, steady rounds, one more node joining, a crash; B, once, 30 nodes on the
full 200 × 50 lease table with 70 placeholder node rows that never act, so that the shares are those of
100 nodes. The whole-cluster figures at 100 nodes are extrapolated from A (the assumptions are listed
below), not measured. MINK_BENCH_SCALE=postgres (or simulation) runs one half alone.`,
		Run: runScale,
	})
}

// scaleTTL is the lease_ttl the wall times assume (the default).
const scaleTTL = 30 * time.Second

// scaleRound is the round period, lease_ttl/3.
const scaleRound = scaleTTL / 3

// scaleShape is the size of a simulated cluster.
type scaleShape struct {
	nodes, tables, partitions int
}

func (c scaleShape) leases() int { return c.tables * (c.partitions + 1) }

func (c scaleShape) String() string {
	return fmt.Sprintf("%d nodes, %d tables × %d partitions", c.nodes, c.tables, c.partitions)
}

// scalePart names the half of the scale scenario to run (environment
// variable MINK_BENCH_SCALE: "simulation" or "postgres"; empty runs both),
// for developing one half.
const scalePart = "MINK_BENCH_SCALE"

func runScale(ctx context.Context, h *H) error {
	sim := ifQuick(h, scaleShape{nodes: 100, tables: 200, partitions: 50}, scaleShape{nodes: 40, tables: 40, partitions: 20})
	part := os.Getenv(scalePart)
	var cold *simColdStarts
	if part != "postgres" {
		c, err := scaleSimulate(ctx, h, sim)
		if err != nil {
			return err
		}
		cold = &c
	}
	if part == "simulation" {
		return nil
	}
	return scalePostgres(ctx, h, sim, cold)
}

// simColdStarts is what the simulated cold starts of the first run did,
// for the extrapolation of their Postgres statements.
type simColdStarts struct {
	allLive, rolling simRound
}

// scaleBefore are the simulated figures of the rules before issue 14 (the
// Plan of commit 84e0850: bounds = shares, no Starting) in this
// simulation, 100 nodes, 200 tables × 50 partitions, seed 1.
const scaleBefore = "Before issue 14 (the same simulation with the Plan of commit 84e0850: bounds = shares, no " +
	"Starting; seed 1): rolling cold start 40 rounds (395 s after the last start; the first node held all 10,000 partition " +
	"leases, then handed back one per table per round), then most on one node 200, fewest 0; all nodes live: 1 round, " +
	"most on one node 200, 50 nodes holding none (largest distance from the mean 100); join: the joiner got no " +
	"partition lease (distance 101); crash: 1 round after expiry, its 200 leases went to 200 nodes that held their " +
	"share of those tables, still 200 / 0 (distance 100). The round-based simulation of bench/RESULTS.md before it " +
	"gave the same: rolling 50 rounds (8m20s), 50 nodes with 200 leases and 50 with none."

// scaleSimulate measures the simulated cluster after a cold start (rolling
// and all live), a join and a crash, up to 3 times (h.Runs) with
// different seeds.
func scaleSimulate(ctx context.Context, h *H, c scaleShape) (simColdStarts, error) {
	var cold simColdStarts
	note := fmt.Sprintf("simulated, %s", c)
	even := float64(c.tables*c.partitions) / float64(c.nodes)
	h.Figure(Figure{Name: "cold start, rolling (nodes 1 s apart): rounds", Unit: "rounds", Max: 3,
		Note: note + "; every lease free, node i starts at i s; from the last start until nothing moves, in lease_ttl/3 (10 s)"})
	h.Figure(Figure{Name: "cold start, rolling: wall time", Unit: "s", Note: "from the last start to the last take or release"})
	h.Figure(Figure{Name: "cold start, rolling: all partitions held", Unit: "s", Note: "from the first start"})
	h.Figure(Figure{Name: "cold start, rolling: longest unheld partition", Unit: "s", Max: 40,
		Note: "from the last start (lease_ttl + a round = 40 s)"})
	h.Figure(Figure{Name: "cold start, rolling: most partition leases on one node at any time", Unit: "leases",
		Ref: "partition leases per node, even spread"})
	h.Figure(Figure{Name: "cold start, rolling: largest distance from the mean", Unit: "leases", Max: 1,
		Note: "|a node's partition leases − the mean| once stable"})
	h.Figure(Figure{Name: "cold start, rolling: takes and releases", Unit: "statements"})
	h.Figure(Figure{Name: "cold start, all nodes live: rounds", Unit: "rounds", Max: 3,
		Note: note + "; every lease free, every node row live and no node Starting (e.g. Postgres back after an outage), rounds at random phases"})
	h.Figure(Figure{Name: "cold start, all nodes live: wall time", Unit: "s", Note: "to the last take or release"})
	h.Figure(Figure{Name: "cold start, all nodes live: most partition leases on one node", Unit: "leases",
		Ref: "partition leases per node, even spread"})
	h.Figure(Figure{Name: "partition leases per node, even spread", Unit: "leases", Note: "computed: partitions / nodes"})
	h.Figure(Figure{Name: "cold start, all nodes live: nodes holding no partition", Unit: "nodes"})
	h.Figure(Figure{Name: "cold start, all nodes live: largest distance from the mean", Unit: "leases", Max: 1})
	h.Figure(Figure{Name: "cold start, all nodes live: longest unheld partition", Unit: "s", Max: 40})
	h.Figure(Figure{Name: "before, cold start after an outage without Starting again: rounds", Unit: "rounds",
		Note: "every lease and node row expired (Postgres back after an outage longer than lease_ttl), rounds at random phases; " +
			"a node is not Starting when it registers again, as before this change; run once"})
	h.Figure(Figure{Name: "before, cold start after an outage without Starting again: most partition leases on one node at any time", Unit: "leases",
		Ref: "partition leases per node, even spread"})
	h.Figure(Figure{Name: "cold start after an outage: rounds", Unit: "rounds", Max: 3,
		Note: "every lease and node row expired (Postgres back after an outage longer than lease_ttl); a node whose trust window ended is Starting again for lease_ttl/3 (cluster.go)"})
	h.Figure(Figure{Name: "cold start after an outage: longest unheld partition", Unit: "s", Max: 40})
	h.Figure(Figure{Name: "join (one more node): rounds", Unit: "rounds", Max: 3,
		Note: "into the stable cluster of the cold start; the joiner is Starting for its first 10 s"})
	h.Figure(Figure{Name: "join: wall time", Unit: "s", Note: "from the joiner's start to the last take or release"})
	h.Figure(Figure{Name: "join: partition leases that moved", Unit: "leases", Ref: "join: partition leases the joiner should hold",
		Note: "takes after the join"})
	h.Figure(Figure{Name: "join: partition leases the joiner should hold", Unit: "leases", Note: "computed: partitions / (nodes + 1)"})
	h.Figure(Figure{Name: "join: partition leases of the joiner", Unit: "leases"})
	h.Figure(Figure{Name: "join: longest unheld partition", Unit: "s", Max: 40})
	h.Figure(Figure{Name: "join: largest distance from the mean", Unit: "leases", Max: 1})
	h.Figure(Figure{Name: "crash (the most loaded node): rounds after expiry", Unit: "rounds", Max: 3,
		Note: "it crashes right after a round; its node row and leases expire lease_ttl later"})
	h.Figure(Figure{Name: "crash: wall time", Unit: "s", Note: "from the crash to the last take or release (lease_ttl of it is the expiry)"})
	h.Figure(Figure{Name: "crash: partition leases that moved", Unit: "leases", Note: "takes after the crash"})
	h.Figure(Figure{Name: "crash: longest unheld partition", Unit: "s", Max: 40, Note: "from the crash"})
	h.Figure(Figure{Name: "crash: largest distance from the mean", Unit: "leases", Max: 1})
	h.Figure(Figure{Name: "Plan per node per round", Unit: "ms", Note: "CPU time of cluster.Plan on this machine, " + note})

	// A run takes well under a minute of CPU (a few thousand Plans of a
	// few ms) and the figures hardly vary with the seed: at most 3 runs.
	for run := range min(h.Runs, 3) {
		if err := ctx.Err(); err != nil {
			return cold, err
		}
		start := time.Now()
		seed := uint64(run + 1)
		s, r, err := simRolling(seed, c)
		if err != nil {
			return cold, err
		}
		plans, planTime := s.plans, s.planTime
		h.Add("cold start, rolling (nodes 1 s apart): rounds", float64(r.rounds))
		h.Add("cold start, rolling: wall time", r.took)
		h.Add("cold start, rolling: all partitions held", r.allHeld+float64(c.nodes-1))
		h.Add("cold start, rolling: longest unheld partition", r.unheld)
		h.Add("cold start, rolling: most partition leases on one node at any time", float64(r.peak))
		h.Add("cold start, rolling: largest distance from the mean", r.off)
		h.Add("cold start, rolling: takes and releases", float64(r.did.moves()))
		if run == 0 {
			cold.rolling = r.did
			h.Note("Rolling cold start (simulated, %s, seed %d): stable %.0f s after the last start; most partition leases on "+
				"one node %d, fewest %d (mean %.1f); %d takes and %d releases.", c, seed, r.took, r.most, r.fewest, r.mean,
				r.did.takes, r.did.releases)
		}

		s, r, err = simAllLive(seed, c)
		if err != nil {
			return cold, err
		}
		plans, planTime = plans+s.plans, planTime+s.planTime
		idle := 0
		for _, n := range s.heldBy() {
			if n == 0 {
				idle++
			}
		}
		h.Add("cold start, all nodes live: rounds", float64(r.rounds))
		h.Add("cold start, all nodes live: wall time", r.took)
		h.Add("cold start, all nodes live: most partition leases on one node", float64(r.most))
		h.Add("partition leases per node, even spread", even)
		h.Add("cold start, all nodes live: nodes holding no partition", float64(idle))
		h.Add("cold start, all nodes live: largest distance from the mean", r.off)
		h.Add("cold start, all nodes live: longest unheld partition", r.unheld)
		if run == 0 {
			cold.allLive = r.did
		}

		if run == 0 { // about a minute: the hand-back takes about 50 rounds
			o, r, err := simOutage(seed, c, false)
			if err != nil {
				return cold, err
			}
			plans, planTime = plans+o.plans, planTime+o.planTime
			h.Add("before, cold start after an outage without Starting again: rounds", float64(r.rounds))
			h.Add("before, cold start after an outage without Starting again: most partition leases on one node at any time", float64(r.peak))
		}
		o, r, err := simOutage(seed, c, true)
		if err != nil {
			return cold, err
		}
		plans, planTime = plans+o.plans, planTime+o.planTime
		h.Add("cold start after an outage: rounds", float64(r.rounds))
		h.Add("cold start after an outage: longest unheld partition", r.unheld)

		joiner := simNodeID(c.nodes)
		r, err = simJoin(s, joiner)
		if err != nil {
			return cold, err
		}
		h.Add("join (one more node): rounds", float64(r.rounds))
		h.Add("join: wall time", r.took)
		h.Add("join: partition leases that moved", float64(r.moved))
		h.Add("join: partition leases the joiner should hold", float64(c.tables*c.partitions)/float64(c.nodes+1))
		h.Add("join: partition leases of the joiner", float64(s.heldBy()[joiner]))
		h.Add("join: longest unheld partition", r.unheld)
		h.Add("join: largest distance from the mean", r.off)
		if run == 0 {
			h.Note("Join (simulated, %s, seed %d): stable %.0f s after the joiner's start; the joiner holds %d partition leases; "+
				"most on one node %d, fewest %d (mean %.2f); %d takes, %d releases.", c, seed, r.took, s.heldBy()[joiner],
				r.most, r.fewest, r.mean, r.did.takes, r.did.releases)
		}

		victim, lost, r, err := simCrash(s)
		if err != nil {
			return cold, err
		}
		plans, planTime = plans+s.plans, planTime+s.planTime
		h.Add("crash (the most loaded node): rounds after expiry", float64(r.rounds))
		h.Add("crash: wall time", r.took)
		h.Add("crash: partition leases that moved", float64(r.moved))
		h.Add("crash: longest unheld partition", r.unheld)
		h.Add("crash: largest distance from the mean", r.off)
		if run == 0 {
			h.Note("Crash (simulated, seed %d): %s held %d partition leases; stable %.0f s after the crash; most on one node %d, "+
				"fewest %d (mean %.2f); %d takes, %d releases.", seed, victim, lost, r.took, r.most, r.fewest, r.mean,
				r.did.takes, r.did.releases)
		}
		h.Add("Plan per node per round", float64(planTime.Microseconds())/1e3/float64(plans))
		h.Logf("simulation run %d took %v", run+1, time.Since(start).Round(time.Millisecond))
	}
	if !h.Quick {
		h.Note("%s", scaleBefore)
	}
	return cold, nil
}
