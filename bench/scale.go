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
lease table where a take succeeds only while the lease is still free) for 100 indexing nodes and
200 tables × 50 partitions (10,000 partition leases + 200 writer leases); each round every live
node plans once, in a random order drawn afresh each round, from the table as the nodes before it
left it. Converged = every lease held by a live node, no node above the share of a table, each
writer lease held by its top node, and a round in which nobody takes or releases; "rounds" counts
the rounds up to the last one that did something. Wall time assumes lease_ttl 30 s (a round every 10 s). Seeds 1–3 (at
most 3 runs, to bound the CPU time); the rolling cold start is simulated once (about a minute). Then real cluster loops (cluster.New/Run, in-process,
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

// scaleSimulate measures the rounds to converge of the simulated cluster
// after a cold start, a join and a crash, up to 3 times (h.Runs) with
// different seeds; the rolling cold start (long) runs once.
func scaleSimulate(ctx context.Context, h *H, c scaleShape) (simColdStarts, error) {
	var cold simColdStarts
	roundS := scaleRound.Seconds()
	note := fmt.Sprintf("simulated, %s", c)
	h.Figure(Figure{Name: "cold start, all nodes live: rounds", Unit: "rounds",
		Note: note + "; all node rows live before the first round, every lease free (e.g. Postgres back after an outage)"})
	h.Figure(Figure{Name: "cold start, all nodes live: wall time", Unit: "s", Note: "rounds × lease_ttl/3 (10 s)"})
	h.Figure(Figure{Name: "cold start, all nodes live: most partition leases on one node", Unit: "leases",
		Ref: "partition leases per node, even spread"})
	h.Figure(Figure{Name: "partition leases per node, even spread", Unit: "leases", Note: "computed: partitions / nodes"})
	h.Figure(Figure{Name: "cold start, all nodes live: nodes holding no partition", Unit: "nodes"})
	h.Figure(Figure{Name: "join (one more node): rounds", Unit: "rounds", Note: "the joiner registers at its place in its first round"})
	h.Figure(Figure{Name: "join: wall time", Unit: "s", Note: "rounds × 10 s"})
	h.Figure(Figure{Name: "crash (the most loaded node): rounds after expiry", Unit: "rounds",
		Note: "its node row and leases expire lease_ttl after its last round"})
	h.Figure(Figure{Name: "crash: wall time", Unit: "s", Note: "lease_ttl (30 s, expiry) + rounds × 10 s"})
	h.Figure(Figure{Name: "cold start, rolling (nodes start within one round): rounds", Unit: "rounds",
		Note: "every lease free; each node is live from its first round on, so early nodes see a large share; run once"})
	h.Figure(Figure{Name: "cold start, rolling: wall time", Unit: "s", Note: "rounds × 10 s"})
	h.Figure(Figure{Name: "cold start, rolling: most partition leases on one node after its first round", Unit: "leases"})
	h.Figure(Figure{Name: "Plan per node per round", Unit: "ms", Note: "CPU time of cluster.Plan on this machine, " + note})

	// A run takes about 10 s of CPU (800 Plans of ~12 ms) and the rounds
	// hardly vary with the seed: at most 3 runs.
	for run := range min(h.Runs, 3) {
		if err := ctx.Err(); err != nil {
			return cold, err
		}
		start := time.Now()
		s := newScaleSim(uint64(run+1), c.nodes, c.tables, c.partitions)
		rounds, did, err := s.converge(nil)
		if err != nil {
			return cold, fmt.Errorf("cold start: %w", err)
		}
		if run == 0 {
			cold.allLive = did
		}
		most, _, idle := s.spread()
		if run == 0 {
			atMost := 0
			for _, n := range s.held() {
				if n == most {
					atMost++
				}
			}
			h.Note("Finding (simulated, %s): the share of every table is ceil(%d/%d) = %d and the rules bound each table "+
				"separately, so nothing spreads the load across tables: after the cold start with all nodes live, %d nodes hold "+
				"%d partition leases each and %d hold none, where an even spread is %.0f. A join leaves the shares as they "+
				"are, so nothing is handed back and the joiner gets writer leases only; a crashed node's partitions go to the "+
				"nodes that act first in the round after the expiry.", c, c.partitions, c.nodes, ceilDiv(c.partitions, c.nodes),
				atMost, most, idle, float64(c.tables*c.partitions)/float64(c.nodes))
		}
		h.Add("cold start, all nodes live: rounds", float64(rounds))
		h.Add("cold start, all nodes live: wall time", float64(rounds)*roundS)
		h.Add("cold start, all nodes live: most partition leases on one node", float64(most))
		h.Add("partition leases per node, even spread", float64(c.tables*c.partitions)/float64(c.nodes))
		h.Add("cold start, all nodes live: nodes holding no partition", float64(idle))

		joiner := simNodeID(c.nodes)
		s.nodes = append(s.nodes, joiner)
		rounds, _, err = s.converge(map[string]bool{joiner: true})
		if err != nil {
			return cold, fmt.Errorf("join: %w", err)
		}
		h.Add("join (one more node): rounds", float64(rounds))
		h.Add("join: wall time", float64(rounds)*roundS)
		if run == 0 {
			most, _, idle := s.spread()
			h.Note("Join (simulated, %s): the joiner holds %d partition leases after convergence; most on one node %d, nodes holding none %d.",
				c, s.held()[joiner], most, idle)
		}

		victim := s.mostLoaded()
		lost := s.held()[victim]
		s.crash(victim)
		rounds, _, err = s.converge(nil)
		if err != nil {
			return cold, fmt.Errorf("crash: %w", err)
		}
		h.Add("crash (the most loaded node): rounds after expiry", float64(rounds))
		h.Add("crash: wall time", scaleTTL.Seconds()+float64(rounds)*roundS)
		if run == 0 {
			most, _, idle := s.spread()
			h.Note("Crash (simulated): %s held %d partition leases; after convergence the most on one node is %d, nodes holding none %d.",
				victim, lost, most, idle)
		}

		if run == 0 {
			if cold.rolling, err = scaleRolling(h, c); err != nil {
				return cold, err
			}
		}
		h.Add("Plan per node per round", float64(s.planTime.Microseconds())/1e3/float64(s.plans))
		h.Logf("simulation run %d took %v", run+1, time.Since(start).Round(time.Millisecond))
	}
	return cold, nil
}

// scaleRolling simulates a cold start where the nodes start within one
// round: in the first round each node sees as live only itself and the
// nodes before it.
func scaleRolling(h *H, c scaleShape) (simRound, error) {
	s := newScaleSim(1, c.nodes, c.tables, c.partitions)
	late := map[string]bool{}
	for _, n := range s.nodes {
		late[n] = true
	}
	did := s.round(late)
	first, _, _ := s.spread()
	rounds, rest, err := s.converge(nil)
	if err != nil {
		return did, fmt.Errorf("rolling cold start: %w", err)
	}
	rounds++ // the first round
	did = did.add(rest)
	most, _, idle := s.spread()
	h.Add("cold start, rolling (nodes start within one round): rounds", float64(rounds))
	h.Add("cold start, rolling: wall time", float64(rounds)*scaleRound.Seconds())
	h.Add("cold start, rolling: most partition leases on one node after its first round", float64(first))
	h.Note("Finding (simulated, %s): in a rolling cold start the first node to run a round sees itself alone, its share "+
		"is every partition, and it takes %d partition leases; rule 3 then hands back one partition per table per round, "+
		"so converging takes %d rounds (%v at lease_ttl 30 s), during which that node holds most partitions. "+
		"A below (real nodes on Postgres, started within milliseconds) shows the same.", c, first, rounds,
		time.Duration(rounds)*scaleRound)
	h.Note("Rolling cold start (simulated, %s): after convergence the most partition leases on one node is %d, nodes holding none %d; "+
		"%d take statements (%d lost a race) and %d releases.", c, most, idle, did.takes+did.failedTakes, did.failedTakes, did.releases)
	return did, nil
}
