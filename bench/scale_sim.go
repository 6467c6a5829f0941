package main

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/minkhq/mink/cluster"
)

// This file is the simulation half of the scale scenario: the sharing
// rounds of docs/design.md §3.3 for many nodes, driven through the real
// cluster.Plan against an in-memory lease table that behaves like the
// leases table (a take succeeds only while the lease is still free and
// increments the epoch; a release only by the holder).
//
// A simulated round is one lease_ttl/3 period: every live node plans once,
// in a random order drawn afresh each round, from the table as it is when
// its turn comes (a real round lasts milliseconds of a 10 s period, so a
// node reads what the nodes before it in the period wrote).

// simMaxRounds bounds every convergence; reaching it is an error.
const simMaxRounds = 400

// scaleSim is a simulated cluster: live indexing nodes and the lease table.
type scaleSim struct {
	rng    *rand.Rand
	nodes  []string // live indexing nodes
	leases []cluster.LeaseState
	index  map[string]int // scope → position in leases
	parts  map[int64]int  // partition count per table id

	// planTime and plans add up the CPU time spent in cluster.Plan.
	planTime time.Duration
	plans    int
}

// simRound is what one round, or several, did.
type simRound struct {
	// takes and failedTakes count the take statements that took a lease
	// and those that found it taken; releases the release statements.
	takes, failedTakes, releases int
	// nodeRounds counts the rounds of every node.
	nodeRounds int
}

func (r simRound) active() bool { return r.takes+r.failedTakes+r.releases > 0 }

func (r simRound) add(o simRound) simRound {
	return simRound{r.takes + o.takes, r.failedTakes + o.failedTakes, r.releases + o.releases, r.nodeRounds + o.nodeRounds}
}

// moves counts the take and release statements.
func (r simRound) moves() int { return r.takes + r.failedTakes + r.releases }

// newScaleSim returns a cluster of nodes (ids node-000, node-001, …) and
// tables × partitions partition leases plus one writer lease per table,
// every lease free (never taken: a cold start).
func newScaleSim(seed uint64, nodes, tables, partitions int) *scaleSim {
	s := &scaleSim{rng: rand.New(rand.NewPCG(seed, 0x5ca1e)), index: map[string]int{}, parts: map[int64]int{}}
	for i := range nodes {
		s.nodes = append(s.nodes, simNodeID(i))
	}
	for t := 1; t <= tables; t++ {
		id := int64(t)
		s.parts[id] = partitions
		for p := range partitions {
			s.leases = append(s.leases, cluster.LeaseState{Scope: fmt.Sprintf("%d/partition/%d", id, p),
				TableID: id, Kind: cluster.KindPartition, Partition: int32(p), Free: true})
		}
		s.leases = append(s.leases, cluster.LeaseState{Scope: fmt.Sprintf("%d/writer", id), TableID: id,
			Kind: cluster.KindWriter, Free: true})
	}
	// The database returns rows in no particular order that Plan may rely on.
	s.rng.Shuffle(len(s.leases), func(i, j int) { s.leases[i], s.leases[j] = s.leases[j], s.leases[i] })
	for i, l := range s.leases {
		s.index[l.Scope] = i
	}
	return s
}

func simNodeID(i int) string { return fmt.Sprintf("node-%03d", i) }

var simRoles = []string{cluster.RoleIndexer, cluster.RoleServer}

// act lets node n plan from the table as it is now, seeing visible as the
// live nodes, and applies its releases then its takes.
func (s *scaleSim) act(n string, visible []cluster.Node, r *simRound) {
	// Plan does not modify the leases it is given, so the table is passed
	// without a copy.
	start := time.Now()
	a := cluster.Plan(cluster.State{Me: n, Roles: simRoles, Nodes: visible, Leases: s.leases})
	s.planTime += time.Since(start)
	s.plans++
	for _, sc := range a.Release {
		l := &s.leases[s.index[sc]]
		if l.Free || l.Holder != n {
			panic("bench: scale: " + n + " releases " + sc + " it does not hold")
		}
		l.Holder, l.Free = "", true
		r.releases++
	}
	for _, sc := range a.Take {
		l := &s.leases[s.index[sc]]
		if !l.Free {
			r.failedTakes++ // taken since this node read it (not with fresh reads)
			continue
		}
		l.Holder, l.Free = n, false
		l.Epoch++
		r.takes++
	}
}

// round runs one period: every live node acts once, in a random order.
// A node in late joins the live set when it acts (it registers at the
// start of its first round), so the nodes before it in this round do not
// see it yet; nodes not in late are live from the start.
func (s *scaleSim) round(late map[string]bool) simRound {
	var r simRound
	var visible []cluster.Node
	for _, n := range s.nodes {
		if !late[n] {
			visible = append(visible, cluster.Node{ID: n, Roles: simRoles})
		}
	}
	for _, i := range s.rng.Perm(len(s.nodes)) {
		n := s.nodes[i]
		if late[n] {
			visible = append(visible, cluster.Node{ID: n, Roles: simRoles})
			delete(late, n)
		}
		s.act(n, visible, &r)
		r.nodeRounds++
	}
	return r
}

// converge runs rounds until one does nothing and returns the number of
// rounds up to the last one that did something, and what they did. late
// is as for round, for the first round; that round does not end the
// convergence even if it does nothing (the nodes that acted before a late
// node did not see it).
func (s *scaleSim) converge(late map[string]bool) (int, simRound, error) {
	var sum simRound
	for r := 1; r <= simMaxRounds; r++ {
		partial := len(late) > 0
		rr := s.round(late)
		if !rr.active() && !partial {
			return r - 1, sum, s.check()
		}
		sum = sum.add(rr)
	}
	return 0, sum, fmt.Errorf("scale: no convergence after %d rounds", simMaxRounds)
}

// crash removes node n from the live set with its leases expired, as the
// others see it lease_ttl after its last round: the holder column still
// names it but every lease is free.
func (s *scaleSim) crash(n string) {
	s.nodes = slices.DeleteFunc(s.nodes, func(m string) bool { return m == n })
	for i := range s.leases {
		if s.leases[i].Holder == n {
			s.leases[i].Free = true
		}
	}
}

// held returns the partition leases each live node holds.
func (s *scaleSim) held() map[string]int {
	out := make(map[string]int, len(s.nodes))
	for _, n := range s.nodes {
		out[n] = 0
	}
	for _, l := range s.leases {
		if l.Kind == cluster.KindPartition && !l.Free {
			out[l.Holder]++
		}
	}
	return out
}

// spread returns the most and the fewest partition leases a live node
// holds, and how many live nodes hold none.
func (s *scaleSim) spread() (most, fewest, idle int) {
	fewest = -1
	for _, c := range s.held() {
		most = max(most, c)
		if fewest < 0 || c < fewest {
			fewest = c
		}
		if c == 0 {
			idle++
		}
	}
	return most, fewest, idle
}

// check verifies the converged state of docs/design.md §3.3: every partition is
// held by a live node, no node holds more than the share of a table, and
// each table's writer lease is held by the live node that prefers it most.
func (s *scaleSim) check() error {
	live := map[string]bool{}
	for _, n := range s.nodes {
		live[n] = true
	}
	perTable := map[string]map[int64]int{}
	for _, l := range s.leases {
		if l.Free {
			return fmt.Errorf("scale: converged with %s free", l.Scope)
		}
		if !live[l.Holder] {
			return fmt.Errorf("scale: %s held by %s, not live", l.Scope, l.Holder)
		}
		if l.Kind == cluster.KindWriter {
			if top := topOf(s.nodes, l.Scope); l.Holder != top {
				return fmt.Errorf("scale: writer %s held by %s, not by the top node %s", l.Scope, l.Holder, top)
			}
			continue
		}
		if perTable[l.Holder] == nil {
			perTable[l.Holder] = map[int64]int{}
		}
		perTable[l.Holder][l.TableID]++
	}
	for n, byTable := range perTable {
		for id, c := range byTable {
			if sh := ceilDiv(s.parts[id], len(s.nodes)); c > sh {
				return fmt.Errorf("scale: %s holds %d partitions of table %d, above the share %d", n, c, id, sh)
			}
		}
	}
	return nil
}

// topOf is the node of nodes that prefers scope most (docs/design.md §3.3: the
// highest cluster.Preference, ties to the smaller id).
func topOf(nodes []string, scope string) string {
	top, best := "", uint64(0)
	for _, n := range nodes {
		p := cluster.Preference(n, scope)
		if top == "" || p > best || (p == best && n < top) {
			top, best = n, p
		}
	}
	return top
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// mostLoaded returns the live node holding the most partition leases
// (ties: the smaller id).
func (s *scaleSim) mostLoaded() string {
	held := s.held()
	best := ""
	for _, n := range s.nodes {
		if best == "" || held[n] > held[best] {
			best = n
		}
	}
	return best
}
