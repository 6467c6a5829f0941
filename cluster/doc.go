// Package cluster is the home of Mink's seed rules (docs/design.md §3): membership,
// leases, epochs and the sharing of work between nodes that share one
// PostgreSQL database and nothing else.
//
// # Members
//
// A node registers a row in `nodes` when it starts and renews it every
// lease_ttl/3 (default 30 s, so every 10 s). Every expiry is computed by the
// database (now() + lease_ttl), never by a node's clock, so nodes whose
// clocks disagree still agree on who is live: a node is live while its row
// has not expired. A clean stop stops the jobs, releases every lease and
// deletes the row, and the others see the node gone at once; a crashed
// node's row and leases expire after lease_ttl.
//
// # Leases and the epoch
//
// A lease is the right to do one job: index one partition of a table
// (scope '<table id>/partition/<n>') or write one table (scope
// '<table id>/writer'). A lease is free when its holder is null or its
// expires_at has passed by the database clock. Taking a lease increments its
// epoch in the same UPDATE that sets the holder, so each holding has an
// epoch of its own; renewing keeps the epoch. The epoch is a fencing token:
// every write a job makes carries (scope, holder, epoch) and calls
// mink_check_epoch in the same transaction, which locks the lease row
// FOR SHARE and rejects the write (SQLSTATE MINKF, pgstore.ErrFenced)
// unless the holding is the current, unexpired one. A node that lost a lease
// therefore changes nothing, even before it knows; and while the check's
// transaction is open nobody can take the lease, because the take's UPDATE
// waits for the row lock.
//
// # Sharing
//
// Every round, each node with the indexer role applies Plan (share.go):
// a table's share is ceil(partitions / live indexing nodes); below it a
// node takes free partition leases of that table, the ones it prefers most
// first; above it, it releases one per round, the one it prefers least; the
// writer lease goes to the live indexing node that prefers it most; and
// max_partitions caps the partition leases one node holds. Preference is
// the first 8 bytes of SHA-256(node ‖ 0x00 ‖ scope), the same on every
// node, so the nodes agree without talking to each other. A node without
// the indexer role holds nothing.
//
// The share is applied as a per-node, per-table bound that is never above
// it (docs/design.md §7.1): without a binding cap the bounds of a table add
// up to its partitions and a node's to floor or ceil(all partitions /
// nodes), so the load is balanced across tables, not only within each; the
// extra partitions of each table are dealt by preference with a quota per
// node, so a join or a crash moves few leases. In its first lease_ttl/3
// after it registered a node is Starting and takes nothing (§7.15): in a
// rolling cold start the first node would otherwise take every lease and
// hand them back one per table per round. So is a node whose trust window
// ended (back after an outage). Meanwhile the others hold its bound: one
// loan per table at most, never above the share, handed back in one round
// (lend in share.go).
//
// # When rounds run
//
// A round runs when the node starts, then every lease_ttl/3, and also at
// once (after the current one, if any) when:
//
//   - the database announces a change on the cluster's LISTEN/NOTIFY
//     channel (notify.go; sent at commit by the triggers of migration
//     007): lease rows inserted or deleted (a table created, dropped, or
//     given new partitions) or a node row deleted (a clean stop, whose
//     leases are free). So every node takes a new table's leases, drops a
//     dropped table's, and takes over a stopped node's, within a round
//     trip of the commit rather than up to lease_ttl/3 later. A lease
//     released by rule 3 or 4 and a node that joins send no notice on
//     purpose: a release that woke every node would let an over-share
//     node release again at once, and the hand-back would no longer be
//     gradual (one per table per round of that node). The channel is
//     mink_cluster_<oid of the schema>, one per cluster;
//   - a take in this round found the lease no longer free: another node
//     took it since the read (both were told of the same new table), so
//     this node plans again with what is left rather than stay below its
//     share for a whole interval;
//   - the listening connection (its own, outside the pool) starts or
//     restarts LISTENing, since notices sent while it was not were lost.
//
// Requests coalesce: however many arrive during a round, one more round
// follows it. Only when rounds run changes: a round is the same round
// whatever started it, and Plan's rules (one release per table per round
// included) are untouched. Without the channel (LISTEN failing, for
// example behind a transaction-pooling proxy) rounds still run every
// lease_ttl/3.
//
// # A round
//
// Every round, with a timeout of lease_ttl/3:
//
//  1. upsert the node row (re-inserted if it vanished);
//  2. renew the held leases in one UPDATE … RETURNING; a lease missing from
//     the result is lost and its job is cancelled at once;
//  3. read the live nodes, and bring the node's view of the lease table up
//     to date (view.go): one statement returns only the lease rows
//     inserted, taken or released since the previous read's snapshot, the
//     rows deleted since, and the holdings that have expired (free is
//     judged by the database); Plan is handed every lease of the view;
//  4. Plan; release (cancel the job, wait for it, then clear the holder
//     where holder and epoch are still ours); take (one UPDATE per lease,
//     only where free, returning the new epoch) and start the job;
//  5. restart jobs that returned while their lease is held; drop (and hand
//     back) leases whose job returned an error, such as pgstore.ErrFenced.
//
// # The trust window
//
// Postgres may stop answering while a node holds leases. The leases then
// expire at the database and other nodes take them; the node must have
// stopped its jobs by then, without being able to ask. So it trusts its
// leases only until
//
//	start of the last successful renewal + lease_ttl − safety margin
//
// measured on its own monotonic clock. The renewal sets expires_at from the
// database's now(), which is no earlier than the instant the node started
// the attempt, so the node stops trusting at least a safety margin (default
// lease_ttl/6) before any lease can expire. Each attempt has its own timeout
// (lease_ttl/3), so a hanging Postgres cannot hold the loop past the window.
//
//	                renewal ok: window = attempt start + ttl − margin
//	               +-------------------+
//	               |                   |
//	               v                   |
//	 start --> [trusted] -- renewal ok --+
//	               |  ^
//	window ends,   |  |  renewal ok: jobs of the leases it still
//	no renewal:    |  |  holds restart; lost ones are retaken
//	jobs stop      v  |  by Plan under a new epoch
//	            [distrusted] -- renewal fails --+
//	               ^                            |
//	               +----------------------------+
//
// In the distrusted state the node keeps its last view of the members (for
// forwarding reads to owners, §3.5) and keeps trying rounds; no restart is
// needed when Postgres answers again. Expiry itself is always judged by the
// database clock, never by comparing node clocks.
//
// # Stop
//
// When Run's context is cancelled the node stops every job, waits for them
// to return, releases every lease it holds and deletes its row, with a
// fresh short context. Deleting the row notifies the others, which run a
// round at once and take the leases over.
package cluster
