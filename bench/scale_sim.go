package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/minkhq/mink/cluster"
)

// This file is the simulation half of the scale scenario: the sharing
// rounds of docs/design.md §3.3 for many nodes, driven through the real
// cluster.Plan against an in-memory lease table that behaves like the
// leases table (a take succeeds only while the lease is free and
// increments the epoch; a release only by the holder; renewal extends the
// expiry of the holder's leases).
//
// Time is simulated in milliseconds. Each node runs a round every
// lease_ttl/3 at its own phase (its first round, when it registers, plus
// k × 10 s); a round is atomic at its instant (a real round lasts
// milliseconds of a 10 s period): it upserts the node row, renews the
// node's leases, reads the live nodes and the leases as they are at that
// instant (free judged by the expiry), plans, releases, takes. A node is
// Starting in the rounds of its first lease_ttl/3 after it registered, as
// cluster.go says. A crashed node runs no more rounds; its row and leases
// expire lease_ttl after its last round.

// simPeriod and simTTL are lease_ttl/3 and lease_ttl in milliseconds.
const (
	simTTL    = int64(scaleTTL / time.Millisecond)
	simPeriod = int64(scaleRound / time.Millisecond)
)

// simMaxTime bounds every scenario (simulated); reaching it is an error.
const simMaxTime = 2000 * simPeriod

// simMember is a node of the simulated cluster.
type simMember struct {
	id string
	// first is the time of its first round (registration); next of its
	// next round, -1 once crashed.
	first, next int64
	// rowExpires is the expiry of its node row, -1 before it registered.
	rowExpires int64
	// starting is false for a node that was registered long before the
	// simulated time starts (its first lease_ttl/3 is over).
	starting bool
	// fresh is true for a new process: the others see it Starting too
	// (nodes.started_at); a node back after an outage is Starting only in
	// its own view.
	fresh bool
}

// scaleSim is a simulated cluster: the nodes and the lease table.
type scaleSim struct {
	rng     *rand.Rand
	now     int64
	members []*simMember
	leases  []cluster.LeaseState
	expires []int64        // per lease, like leases
	index   map[string]int // scope → position in leases
	parts   map[int64]int  // partition count per table id

	// unheldSince is, per lease, the time since which no running node
	// holds it (free, or held by a crashed node), -1 while one does.
	unheldSince []int64
	// from is the time of the scenario's event: unheld times are counted
	// from it; maxUnheld is the longest so far (partition leases).
	from, maxUnheld int64
	// lastMove is the time of the last take or release; did counts what
	// the rounds since the event did, movedRounds its node rounds up to
	// the last move.
	lastMove    int64
	did         simRound
	movedRounds int
	partTakes   int // takes of partition leases since the event
	// unheldCount is the number of unheld partition leases; allHeld the
	// first time since the event that it was 0 (-1: not yet).
	unheldCount int
	allHeld     int64
	count       map[string]int // partition leases per holder
	peak        int            // most partition leases on one node since the event

	// planTime and plans add up the CPU time spent in cluster.Plan.
	planTime time.Duration
	plans    int
}

// simRound is what rounds did.
type simRound struct {
	// takes and failedTakes count the take statements that took a lease
	// and those that found it taken; releases the release statements.
	takes, failedTakes, releases int
	// nodeRounds counts the rounds of every node.
	nodeRounds int
}

// moves counts the take and release statements.
func (r simRound) moves() int { return r.takes + r.failedTakes + r.releases }

// newScaleSim returns a cluster without nodes and with tables ×
// partitions partition leases plus one writer lease per table, every
// lease free (never taken: a cold start).
func newScaleSim(seed uint64, tables, partitions int) *scaleSim {
	s := &scaleSim{rng: rand.New(rand.NewPCG(seed, 0x5ca1e)), index: map[string]int{}, parts: map[int64]int{},
		count: map[string]int{}}
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
	s.expires = make([]int64, len(s.leases))
	s.unheldSince = make([]int64, len(s.leases)) // unheld since 0
	for i, l := range s.leases {
		s.index[l.Scope] = i
		if l.Kind == cluster.KindPartition {
			s.unheldCount++
		}
	}
	return s
}

func simNodeID(i int) string { return fmt.Sprintf("node-%03d", i) }

var simRoles = []string{cluster.RoleIndexer, cluster.RoleServer}

// add adds a node whose first round is at first. A live node's row is
// live from the start (it registered before); a starting one is Starting
// in the rounds of its first lease_ttl/3 after it registers.
func (s *scaleSim) add(id string, first int64, live, starting, fresh bool) {
	m := &simMember{id: id, first: first, next: first, rowExpires: -1, starting: starting, fresh: fresh}
	if live {
		m.rowExpires = first + simTTL
	}
	s.members = append(s.members, m)
}

// event marks the scenario's event at the current time: the counters and
// the longest unheld time start again from it.
func (s *scaleSim) event(at int64) {
	s.from, s.maxUnheld, s.did, s.lastMove, s.movedRounds = at, 0, simRound{}, at, 0
	s.allHeld, s.peak, s.partTakes = -1, 0, 0
	if s.unheldCount == 0 {
		s.allHeld = at
	}
}

// running returns the nodes that have not crashed.
func (s *scaleSim) running() []*simMember {
	var ms []*simMember
	for _, m := range s.members {
		if m.next >= 0 {
			ms = append(ms, m)
		}
	}
	return ms
}

// unheld starts lease i's unheld time at the current time.
func (s *scaleSim) unheld(i int) {
	if s.unheldSince[i] < 0 && s.leases[i].Kind == cluster.KindPartition {
		s.unheldCount++
	}
	s.unheldSince[i] = s.now
}

// held ends lease i's unheld time at the current time.
func (s *scaleSim) held(i int) {
	if s.unheldSince[i] >= 0 && s.leases[i].Kind == cluster.KindPartition {
		s.maxUnheld = max(s.maxUnheld, s.now-max(s.unheldSince[i], s.from))
		s.unheldCount--
		if s.unheldCount == 0 && s.allHeld < 0 {
			s.allHeld = s.now
		}
	}
	s.unheldSince[i] = -1
}

// longestUnheld returns the longest unheld time since the event, counting
// the leases still unheld up to now.
func (s *scaleSim) longestUnheld() int64 {
	longest := s.maxUnheld
	for i, since := range s.unheldSince {
		if since >= 0 && s.leases[i].Kind == cluster.KindPartition {
			longest = max(longest, s.now-max(since, s.from))
		}
	}
	return longest
}

// step runs the next round of any node (the earliest; ties: the first
// added) and returns it, or nil when no node runs rounds.
func (s *scaleSim) step() *simMember {
	var m *simMember
	for _, c := range s.members {
		if c.next >= 0 && (m == nil || c.next < m.next) {
			m = c
		}
	}
	if m == nil {
		return nil
	}
	s.now = m.next
	s.round(m)
	m.next = s.now + simPeriod
	return m
}

// round is one round of m at the current time.
func (s *scaleSim) round(m *simMember) {
	t := s.now
	if m.rowExpires < 0 {
		m.first = t
	}
	m.rowExpires = t + simTTL
	for i := range s.leases {
		l := &s.leases[i]
		l.Free = l.Holder == "" || s.expires[i] < t
		if !l.Free && l.Holder == m.id {
			s.expires[i] = t + simTTL
		}
	}
	st := cluster.State{Me: m.id, Roles: simRoles, Leases: s.leases,
		Starting: m.starting && t < m.first+simPeriod}
	for _, p := range s.members {
		if p.rowExpires > t {
			st.Nodes = append(st.Nodes, cluster.Node{ID: p.id, Roles: simRoles,
				Starting: p.fresh && t < p.first+simPeriod})
		}
	}
	// Plan does not modify the leases it is given: no copy.
	start := time.Now()
	a := cluster.Plan(st)
	s.planTime += time.Since(start)
	s.plans++
	s.did.nodeRounds++
	for _, sc := range a.Release {
		i := s.index[sc]
		l := &s.leases[i]
		if l.Free || l.Holder != m.id {
			panic("bench: scale: " + m.id + " releases " + sc + " it does not hold")
		}
		l.Holder, l.Free = "", true
		s.did.releases++
		s.lastMove = t
		if l.Kind == cluster.KindPartition {
			s.unheld(i)
			s.count[m.id]--
		}
	}
	for _, sc := range a.Take {
		i := s.index[sc]
		l := &s.leases[i]
		if !l.Free {
			s.did.failedTakes++ // not with atomic rounds; counted if it happens
			continue
		}
		if l.Kind == cluster.KindPartition && l.Holder != "" {
			s.count[l.Holder]-- // an expired holding
		}
		l.Holder, l.Free, s.expires[i] = m.id, false, t+simTTL
		l.Epoch++
		s.did.takes++
		s.lastMove = t
		if l.Kind == cluster.KindPartition {
			s.held(i)
			s.count[m.id]++
			s.partTakes++
		}
	}
	if len(a.Take)+len(a.Release) > 0 {
		s.movedRounds = s.did.nodeRounds
	}
	s.peak = max(s.peak, s.count[m.id])
}

// crash stops m right after its last round: it runs no more rounds, and
// its row and leases expire lease_ttl after that round.
func (s *scaleSim) crash(m *simMember) {
	m.next = -1
	for i, l := range s.leases {
		if l.Holder == m.id && !l.Free {
			s.unheld(i)
		}
	}
}

// settle runs rounds until the cluster is stable: no node is Starting, no
// row or lease of a crashed node is still to expire, and nothing moved
// for a whole period (every running node planned on the same table and
// did nothing, so nothing will move until the membership changes). It
// returns the time of the last move.
func (s *scaleSim) settle() (int64, error) {
	quiet := func() bool {
		// calm is when the last thing that makes nodes act happened: a
		// move, the end of a node's Starting, a crashed node's expiry.
		calm := s.lastMove
		for _, m := range s.members {
			switch {
			case m.next >= 0 && m.rowExpires < 0:
				return false // not registered yet
			case m.next >= 0 && m.starting:
				calm = max(calm, m.first+simPeriod)
			case m.next < 0:
				calm = max(calm, m.rowExpires)
			}
		}
		return s.now-calm > simPeriod
	}
	for !quiet() {
		if s.now > simMaxTime {
			return 0, fmt.Errorf("scale: no stable state after %v simulated", time.Duration(s.now)*time.Millisecond)
		}
		if s.step() == nil {
			return 0, fmt.Errorf("scale: no node runs rounds")
		}
	}
	return s.lastMove, s.check()
}

// simResult is one scenario's outcome.
type simResult struct {
	// rounds is the time from the event to the last move in periods,
	// rounded up, and took that time in seconds; unheld the longest
	// unheld time of a partition lease since the event, and allHeld the
	// time from the event until every partition was held, in seconds.
	rounds                int
	took, unheld, allHeld float64
	// did is what the rounds since the event did, up to the last move;
	// moved counts its takes of partition leases.
	did   simRound
	moved int
	// peak is the most partition leases one node held at any time since
	// the event.
	peak int
	// most, fewest are the partition leases on the most and the least
	// loaded node; mean is all partitions / live nodes; off is the
	// largest distance of a node's count from the mean.
	most, fewest int
	mean, off    float64
}

// result sums up the scenario since the event, the cluster being stable.
func (s *scaleSim) result(last int64) simResult {
	r := simResult{rounds: int(math.Ceil(float64(last-s.from) / float64(simPeriod))),
		took: float64(last-s.from) / 1e3, unheld: float64(s.longestUnheld()) / 1e3,
		allHeld: float64(s.allHeld-s.from) / 1e3, did: s.did, moved: s.partTakes, peak: s.peak}
	r.did.nodeRounds = s.movedRounds
	held := s.heldBy()
	total := 0
	for _, c := range s.parts {
		total += c
	}
	r.mean = float64(total) / float64(len(held))
	r.fewest = -1
	for _, c := range held {
		r.most = max(r.most, c)
		if r.fewest < 0 || c < r.fewest {
			r.fewest = c
		}
		r.off = max(r.off, math.Abs(float64(c)-r.mean))
	}
	return r
}

// heldBy returns the partition leases each running node holds.
func (s *scaleSim) heldBy() map[string]int {
	out := map[string]int{}
	for _, m := range s.running() {
		out[m.id] = 0
	}
	for _, l := range s.leases {
		if l.Kind == cluster.KindPartition && !l.Free {
			out[l.Holder]++
		}
	}
	return out
}

// mostLoaded returns the running node holding the most partition leases
// (ties: the first added).
func (s *scaleSim) mostLoaded() *simMember {
	held := s.heldBy()
	var best *simMember
	for _, m := range s.running() {
		if best == nil || held[m.id] > held[best.id] {
			best = m
		}
	}
	return best
}

// check verifies the stable state of docs/design.md §3.3: every lease is
// held by a running node, no node holds more than the share of a table,
// and each table's writer lease is held by the live node that prefers it
// most. Balance is measured, not checked (the rules before issue 14 did
// not balance).
func (s *scaleSim) check() error {
	var live []string
	for _, m := range s.running() {
		live = append(live, m.id)
	}
	isLive := map[string]bool{}
	for _, id := range live {
		isLive[id] = true
	}
	perTable := map[string]map[int64]int{}
	for _, l := range s.leases {
		if l.Free {
			return fmt.Errorf("scale: stable with %s free", l.Scope)
		}
		if !isLive[l.Holder] {
			return fmt.Errorf("scale: %s held by %s, not running", l.Scope, l.Holder)
		}
		if l.Kind == cluster.KindWriter {
			if top := topOf(live, l.Scope); l.Holder != top {
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
			if sh := ceilDiv(s.parts[id], len(live)); c > sh {
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

// The scenarios. Each returns its result; the cluster stays as it ends.

// simRolling: every lease free, node i starts (its first round) at i
// seconds, Starting for its first lease_ttl/3. The event is the last
// node's start.
func simRolling(seed uint64, c scaleShape) (*scaleSim, simResult, error) {
	s := newScaleSim(seed, c.tables, c.partitions)
	for i := range c.nodes {
		s.add(simNodeID(i), int64(i)*1000, false, true, true)
	}
	s.event(int64(c.nodes-1) * 1000)
	last, err := s.settle()
	if err != nil {
		return s, simResult{}, fmt.Errorf("rolling cold start: %w", err)
	}
	return s, s.result(last), nil
}

// simAllLive: every lease free, every node row live from the start and no
// node Starting (nodes that were running when, say, Postgres went away),
// each node's round at a random phase.
func simAllLive(seed uint64, c scaleShape) (*scaleSim, simResult, error) {
	s := newScaleSim(seed, c.tables, c.partitions)
	for i := range c.nodes {
		s.add(simNodeID(i), s.rng.Int64N(simPeriod), true, false, false)
	}
	s.event(0)
	last, err := s.settle()
	if err != nil {
		return s, simResult{}, fmt.Errorf("cold start, all live: %w", err)
	}
	return s, s.result(last), nil
}

// simOutage: every lease free and every node row expired (Postgres back
// after an outage longer than lease_ttl), each node's next round at a
// random phase, where it registers again. starting says whether a node
// that registers again is Starting (cluster.go sets Starting only in the
// first lease_ttl/3 after the process's first registration).
func simOutage(seed uint64, c scaleShape, starting bool) (*scaleSim, simResult, error) {
	s := newScaleSim(seed, c.tables, c.partitions)
	for i := range c.nodes {
		s.add(simNodeID(i), s.rng.Int64N(simPeriod), false, starting, false)
	}
	s.event(0)
	last, err := s.settle()
	if err != nil {
		return s, simResult{}, fmt.Errorf("cold start after an outage: %w", err)
	}
	return s, s.result(last), nil
}

// simJoin adds one node to a stable cluster at a random time within the
// next period; it is Starting for its first lease_ttl/3.
func simJoin(s *scaleSim, id string) (simResult, error) {
	at := s.now + 1 + s.rng.Int64N(simPeriod)
	s.add(id, at, false, true, true)
	for s.now < at {
		s.step()
	}
	s.event(at)
	last, err := s.settle()
	if err != nil {
		return simResult{}, fmt.Errorf("join: %w", err)
	}
	return s.result(last), nil
}

// simCrash crashes the most loaded node of a stable cluster right after
// one of its rounds (the worst case: its leases expire a whole lease_ttl
// later). The event is the crash; rounds are counted from the expiry.
func simCrash(s *scaleSim) (victim string, lost int, r simResult, err error) {
	m := s.mostLoaded()
	for s.step() != m {
	}
	victim, lost = m.id, s.heldBy()[m.id]
	s.crash(m)
	s.event(s.now)
	last, err := s.settle()
	if err != nil {
		return victim, lost, r, fmt.Errorf("crash: %w", err)
	}
	r = s.result(last)
	r.rounds = max(0, int(math.Ceil(float64(last-m.rowExpires)/float64(simPeriod))))
	return victim, lost, r, nil
}
