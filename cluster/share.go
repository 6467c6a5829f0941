package cluster

import (
	"cmp"
	"slices"
	"strconv"
)

// This file is the home of the sharing rules of docs/design.md §3.3. Plan is a pure
// function: the Postgres loop in cluster.go reads a State, calls Plan and
// applies the Actions; the property tests in share_test.go run many nodes'
// Plans against an in-memory lease table.

// State is what one node knows at the start of a sharing round.
type State struct {
	// Me is the planning node's id.
	Me string
	// Roles are the planning node's roles. They win over Me's entry in
	// Nodes, and Me counts as a live indexing node when they include
	// RoleIndexer even if Nodes does not list it.
	Roles []string
	// Nodes are the live nodes: rows of `nodes` that have not expired.
	Nodes []Node
	// Leases are all lease rows, with Free judged by the database clock
	// when the state was read.
	Leases []LeaseState
	// MaxPartitions is the `max_partitions` of rule 5 (0 = no cap). A
	// node only knows its own setting; Plan assumes every node has the same.
	MaxPartitions int
	// Starting is true in the rounds of the node's first lease_ttl/3 after
	// it registered (docs/design.md §3.3, "a first round that waits to see
	// its peers"): Plan takes nothing then, so that in a rolling cold start
	// the first node does not take every lease only to hand them back one
	// per table per round.
	Starting bool
}

// Node is a live node as the sharing rules see it.
type Node struct {
	ID    string
	Roles []string
	// Starting is true while the node is in its first lease_ttl/3 after it
	// registered (nodes.started_at, by the database clock): it takes
	// nothing yet, so the others hold its bound for it (see Plan).
	Starting bool
	// MaxPartitions is the node's max_partitions (0 = no cap), from its
	// row: every node plans with every node's own cap.
	MaxPartitions int
}

// LeaseState is one lease row.
type LeaseState struct {
	Scope     string
	TableID   int64
	Kind      string // KindPartition or KindWriter
	Partition int32  // for KindPartition
	// Holder is the holder column ("" when null). It may be set on a free
	// lease: an expired holding keeps its holder until someone takes it.
	Holder string
	Epoch  int64
	// Free is true when holder is null or expires_at < now(), as judged by
	// the database when the state was read. Plan never compares clocks.
	Free bool
}

// held reports whether n holds l: it is the holder and the holding has not
// expired.
func (l LeaseState) held(n string) bool { return !l.Free && l.Holder == n }

// Actions is what one node does in a round.
type Actions struct {
	// Take are scopes of free leases to take, in order.
	Take []string
	// Release are scopes of leases this node holds and hands back.
	Release []string
}

// Plan applies the sharing rules of docs/design.md §3.3 for s.Me:
//
//  1. A table's partition share = ceil(partition count / live indexing nodes).
//  2. A node below its share takes free partition leases of that table, the
//     ones it prefers most first.
//  3. A node above its share releases one partition lease of that table per
//     round (the one it prefers least).
//  4. Each table's writer lease goes to the live indexing node that prefers
//     it most: that node takes it when free; a holder that is not the top
//     node releases it.
//  5. max_partitions caps the partition leases one node holds across all
//     tables (0 = no cap).
//
// A node without the indexer role takes nothing and releases every lease
// it holds. A node that is Starting takes nothing (partition or writer
// leases) and releases as usual.
//
// Rules 2 and 3 are applied to a per-node, per-table bound that is never
// above the share (docs/design.md §7.1), computed identically by every node
// from the live indexing nodes and the tables (see bounds). Without a
// binding cap the bounds balance the load across tables, every node within
// one lease of the mean: the shares alone bound each table separately, and
// with 100 nodes and 200 tables of 50 partitions (every share 1) 50 nodes
// held 200 leases while 50 held none. With a binding cap they keep every
// partition held whenever the caps allow it: with 2 nodes capped at 2 and
// tables A (2 partitions), B and C (1 each), the shares alone let X hold B
// and C and Y one partition of A, and the other partition of A waited
// forever. Below its bound a node takes; above it, it releases one per
// table per round, exactly as rules 2 and 3 say for the share.
func Plan(s State) Actions {
	var a Actions
	if !slices.Contains(s.Roles, RoleIndexer) {
		for _, l := range s.Leases {
			if l.held(s.Me) {
				a.Release = append(a.Release, l.Scope)
			}
		}
		return a
	}
	indexers := indexingNodes(s)
	tables := tablesOf(s.Leases)

	all := bounds(tables, indexers, capsOf(s, indexers))
	bound := all[s.Me]
	if !s.Starting {
		bound = lend(s, tables, indexers, all)
	}
	total := 0
	for _, l := range s.Leases {
		if l.Kind == KindPartition && l.held(s.Me) {
			total++
		}
	}

	// Rule 3 (and 5): above the bound, release the least preferred one.
	for i, t := range tables {
		mine := byPreference(s.Me, t.partitions, func(l LeaseState) bool { return l.held(s.Me) })
		if len(mine) > bound[i] {
			a.Release = append(a.Release, mine[len(mine)-1].Scope)
		}
	}
	// Rule 2 (and 5): below the bound, take free ones, most preferred first.
	// Room is counted before this round's releases take effect, so the cap
	// holds even if a release fails. A Starting node has not seen its
	// peers yet: what it took with the bounds of a smaller cluster it
	// would hand back one per table per round.
	room := -1 // no cap
	if s.MaxPartitions > 0 {
		room = max(0, s.MaxPartitions-total)
	}
	for i, t := range tables {
		if s.Starting {
			break
		}
		mine := 0
		for _, l := range t.partitions {
			if l.held(s.Me) {
				mine++
			}
		}
		need := bound[i] - mine
		if room >= 0 {
			need = min(need, room)
		}
		if need <= 0 {
			continue
		}
		free := byPreference(s.Me, t.partitions, func(l LeaseState) bool { return l.Free })
		for _, l := range free[:min(need, len(free))] {
			a.Take = append(a.Take, l.Scope)
			if room > 0 {
				room--
			}
		}
	}
	// Rule 4: the writer lease goes to the top indexing node.
	for _, t := range tables {
		for _, w := range t.writers {
			top := topNode(indexers, w.Scope)
			switch {
			case top == s.Me && w.Free && !s.Starting:
				a.Take = append(a.Take, w.Scope)
			case top != s.Me && w.held(s.Me):
				a.Release = append(a.Release, w.Scope)
			}
		}
	}
	return a
}

// indexingNodes returns the ids of the live nodes with the indexer role,
// Me included, sorted and without duplicates.
func indexingNodes(s State) []string {
	ids := []string{s.Me}
	for _, n := range s.Nodes {
		if n.ID != s.Me && slices.Contains(n.Roles, RoleIndexer) {
			ids = append(ids, n.ID)
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// capsOf returns the max_partitions of each indexing node (0 = no cap):
// Me's from s.MaxPartitions, the others' from their rows.
func capsOf(s State, indexers []string) map[string]int {
	caps := make(map[string]int, len(indexers))
	for _, n := range s.Nodes {
		caps[n.ID] = n.MaxPartitions
	}
	caps[s.Me] = s.MaxPartitions
	return caps
}

// table is one table's leases.
type table struct {
	id         int64
	partitions []LeaseState
	writers    []LeaseState // one in a well-formed database
}

// tablesOf groups leases by table, ordered by table id.
func tablesOf(leases []LeaseState) []table {
	idx := map[int64]int{}
	var ts []table
	for _, l := range leases {
		i, ok := idx[l.TableID]
		if !ok {
			i = len(ts)
			idx[l.TableID] = i
			ts = append(ts, table{id: l.TableID})
		}
		switch l.Kind {
		case KindPartition:
			ts[i].partitions = append(ts[i].partitions, l)
		case KindWriter:
			ts[i].writers = append(ts[i].writers, l)
		}
	}
	slices.SortFunc(ts, func(a, b table) int { return cmp.Compare(a.id, b.id) })
	return ts
}

// lend returns s.Me's bounds with the partitions that the bounds give to
// Starting peers lent out. A Starting node takes nothing in its first
// lease_ttl/3, and in a rolling start the bounds keep moving to the nodes
// that just started: without lending, a partition could wait unheld until
// the last node of the rollout had finished starting. So for each table,
// the partitions in its Starting nodes' bounds go, one each, to the
// non-Starting nodes below the table's share, the ones that prefer the
// table most first. A lent bound is at most one above the node's own and
// never above the share (rule 1); when the borrower sees the Starting node
// done, it is above its bound by at most one per table and hands it back
// in one round (rule 3). Every node computes the same loans.
func lend(s State, tables []table, indexers []string, all map[string][]int) []int {
	starting := map[string]bool{}
	for _, n := range s.Nodes {
		if n.Starting && n.ID != s.Me {
			starting[n.ID] = true
		}
	}
	mine := all[s.Me]
	if len(starting) == 0 {
		return mine
	}
	out := slices.Clone(mine)
	for i, t := range tables {
		lent := 0
		for id := range starting {
			if b, ok := all[id]; ok {
				lent += b[i]
			}
		}
		sh := share(len(t.partitions), len(indexers))
		if lent == 0 || mine[i] >= sh {
			continue
		}
		key := strconv.FormatInt(t.id, 10)
		better := 0 // borrowers that come before s.Me
		for _, id := range indexers {
			if id != s.Me && !starting[id] && all[id][i] < sh && prefers(id, s.Me, key) {
				better++
			}
		}
		if better < lent {
			out[i]++
		}
	}
	return out
}

// share is rule 1: ceil(p / n).
func share(p, n int) int { return (p + n - 1) / n }

// bounds returns, for every indexing node, the number of partition leases
// of each table (indexed like tables) it may hold. No bound exceeds the
// table's share (rule 1), and every node computes the same bounds from the
// same membership and tables.
//
// Without a binding cap (maxPartitions 0, or at least ceil(all partitions
// / nodes)) the bounds are balanced (see balanced): a table's bounds add up
// to its partition count and each node's to the floor or the ceiling of
// all partitions / nodes, so every node is within one lease of the mean.
//
// With a binding cap (some node's max_partitions below ceil(all
// partitions / nodes)), each node's bounds add up to at most its room, and
// a table's bounds add up to its partition count whenever the rooms
// together allow it, so no partition waits for a node that may not take
// it. A node's room is its cap; an uncapped node's (and a capped one's
// above it) is the water level: the least level L at which the
// nodes, each holding min(cap, L), could hold every partition. So the
// nodes without a binding cap share evenly what the capped ones cannot
// hold. The bounds are filled table by table, each partition going to the
// node with the most room left (ties: the node preferring the table's id
// most). Keeping the room as even as possible is what lets every later
// table find enough distinct nodes for its partitions. Room left over is
// then spread up to the share, so that a node keeps what it holds where
// the rooms allow.
func bounds(tables []table, indexers []string, caps map[string]int) map[string][]int {
	out := make(map[string][]int, len(indexers))
	total := 0
	for _, t := range tables {
		total += len(t.partitions)
	}
	binding := false
	for _, n := range indexers {
		if c := caps[n]; c > 0 && c < share(total, len(indexers)) {
			binding = true
		}
	}
	if !binding {
		return balanced(tables, indexers)
	}
	level := waterLevel(indexers, caps, total)
	room := make(map[string]int, len(indexers))
	for _, n := range indexers {
		out[n] = make([]int, len(tables))
		room[n] = level
		if c := caps[n]; c > 0 && c < room[n] {
			room[n] = c
		}
	}
	for i, t := range tables {
		sh := share(len(t.partitions), len(indexers))
		key := strconv.FormatInt(t.id, 10)
		for range t.partitions {
			best := ""
			for _, n := range indexers {
				if out[n][i] >= sh || room[n] == 0 {
					continue
				}
				if best == "" || room[n] > room[best] || (room[n] == room[best] && prefers(n, best, key)) {
					best = n
				}
			}
			if best == "" {
				// The rooms are full here. A node without a cap may go
				// above the level (the level only evens the load) rather
				// than leave the partition to nobody.
				for _, n := range indexers {
					if out[n][i] >= sh || caps[n] > 0 && room[n] <= 0 {
						continue
					}
					if best == "" || room[n] > room[best] || (room[n] == room[best] && prefers(n, best, key)) {
						best = n
					}
				}
			}
			if best == "" {
				break // the caps are full
			}
			out[best][i]++
			room[best]--
		}
	}
	for _, n := range indexers {
		for i, t := range tables {
			add := max(0, min(share(len(t.partitions), len(indexers))-out[n][i], room[n]))
			out[n][i] += add
			room[n] -= add
		}
	}
	return out
}

// waterLevel returns the least L such that the nodes, each holding
// min(its cap, L) partitions (no cap: L), could hold total; when even the
// caps cannot, the largest cap (every node at its cap).
func waterLevel(indexers []string, caps map[string]int, total int) int {
	hi := 0
	for _, n := range indexers {
		hi = max(hi, caps[n])
	}
	hi = max(hi, total)
	lo := 0
	for lo < hi {
		mid := (lo + hi) / 2
		sum := 0
		for _, n := range indexers {
			c := caps[n]
			if c <= 0 || c > mid {
				c = mid
			}
			sum += c
		}
		if sum >= total {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// balanced returns bounds that add up to each table's partition count and,
// per node, to floor or ceil(all partitions / nodes). Each table gives every
// node q = p div n partitions; its r = p mod n extra ones go to r distinct
// nodes, at most one each, so no bound is above ceil(p / n), the share.
//
// The extras are dealt like rendezvous hashing with a quota: with E extras
// in all, every node may hold c = E div n of them and the first E mod n
// nodes to reach c one more. All (table, node) pairs are taken in the order
// of the node's preference for the table's id, highest first; a pair gets
// an extra while the table still needs one and the node has room. A node
// that joins or leaves thus moves mainly the extras of the pairs it ranks
// high in, rather than reshuffling every table: a join at 100 nodes and
// 10,000 partitions moves about 155 leases (99 must move), where dealing
// the extras table by table to the nodes with the fewest so far moved about
// 2,900 (bench/RESULTS.md, "scale"). When the pairs run out with a table t
// still short, every node u with room already has an extra of t; then a
// full node v without one takes t and hands u one of its extras that u
// lacks. Such an extra exists: u holds t, v does not, and u holds no more
// extras than v.
func balanced(tables []table, indexers []string) map[string][]int {
	n := len(indexers)
	out := make(map[string][]int, n)
	for _, id := range indexers {
		out[id] = make([]int, len(tables))
	}
	need := make([]int, len(tables)) // extras each table still has to give
	extras := 0
	type pair struct {
		table, node int
		pref        uint64
	}
	var pairs []pair
	for i, t := range tables {
		p := len(t.partitions)
		for _, id := range indexers {
			out[id][i] = p / n
		}
		need[i] = p % n
		extras += need[i]
		if need[i] == 0 {
			continue
		}
		key := strconv.FormatInt(t.id, 10)
		for j, id := range indexers {
			pairs = append(pairs, pair{i, j, Preference(id, key)})
		}
	}
	if extras == 0 {
		return out
	}
	slices.SortFunc(pairs, func(a, b pair) int {
		if c := cmp.Compare(b.pref, a.pref); c != 0 {
			return c
		}
		if c := cmp.Compare(indexers[a.node], indexers[b.node]); c != 0 {
			return c
		}
		return cmp.Compare(a.table, b.table)
	})
	// has[j][i]: node j holds an extra of table i.
	has := make([][]bool, n)
	for j := range has {
		has[j] = make([]bool, len(tables))
	}
	load := make([]int, n)
	quota, over := extras/n, extras%n // over: nodes that may hold quota+1
	room := func(j int) bool { return load[j] < quota || (load[j] == quota && over > 0) }
	give := func(i, j int) {
		if load[j] == quota {
			over--
		}
		has[j][i] = true
		load[j]++
		need[i]--
		out[indexers[j]][i]++
	}
	for _, pr := range pairs {
		if need[pr.table] > 0 && room(pr.node) {
			give(pr.table, pr.node)
		}
	}
	for i := range tables {
		for need[i] > 0 {
			u, v := -1, -1 // u has room (and an extra of i), v none of i
			for j := range indexers {
				if u < 0 && room(j) {
					u = j
				}
				if v < 0 && !has[j][i] {
					v = j
				}
			}
			k := 0
			for !has[v][k] || has[u][k] {
				k++
			}
			// v hands its extra of table k to u and takes one of table i.
			has[v][k], has[v][i] = false, true
			out[indexers[v]][k]--
			out[indexers[v]][i]++
			need[i]--
			need[k]++
			give(k, u)
		}
	}
	return out
}

// byPreference returns the leases that pass keep, the ones node prefers
// most first.
func byPreference(node string, leases []LeaseState, keep func(LeaseState) bool) []LeaseState {
	type ranked struct {
		l    LeaseState
		pref uint64
	}
	var rs []ranked
	for _, l := range leases {
		if keep(l) {
			rs = append(rs, ranked{l, Preference(node, l.Scope)})
		}
	}
	slices.SortFunc(rs, func(a, b ranked) int {
		if c := cmp.Compare(b.pref, a.pref); c != 0 {
			return c
		}
		return cmp.Compare(a.l.Scope, b.l.Scope)
	})
	out := make([]LeaseState, len(rs))
	for i, r := range rs {
		out[i] = r.l
	}
	return out
}

// topNode returns the node among nodes that prefers scope most.
func topNode(nodes []string, scope string) string {
	top := ""
	for _, n := range nodes {
		if top == "" || prefers(n, top, scope) {
			top = n
		}
	}
	return top
}
