package cluster

import (
	"context"
	"time"
)

// Roles a node can have (docs/design.md §1).
const (
	RoleIndexer = "indexer"
	RoleServer  = "server"
)

// Lease kinds (docs/design.md §3.2).
const (
	KindPartition = "partition"
	KindWriter    = "writer"
)

// Lease is a lease this node holds, as handed to the job that runs under it.
type Lease struct {
	Scope     string
	TableID   int64
	Kind      string // KindPartition or KindWriter
	Partition int32  // for KindPartition
	Holder    string // this node's id
	Epoch     int64
}

// Jobs runs the work of held leases.
type Jobs interface {
	// Run does the lease's job until ctx is done. ctx is cancelled when the
	// lease is released, lost, or no longer trusted (docs/design.md §3.2 trust
	// window). Every write Run makes to Postgres must carry (Scope, Holder,
	// Epoch) so the fencing check can reject it. Run returns when it stops;
	// an error return (for example pgstore.ErrFenced) makes the node drop
	// its local claim on the lease.
	Run(ctx context.Context, l Lease) error
}

// Member is a live node as seen in the last successful round.
type Member struct {
	ID           string
	AdvertiseURL string
	Roles        []string
	ExpiresAt    time.Time
	// Starting is true in the member's first lease_ttl/3 after it
	// registered (database clock): it takes no lease yet (§3.3).
	Starting bool
	// MaxPartitions is the member's max_partitions (0 = no cap).
	MaxPartitions int
}
