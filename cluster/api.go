package cluster

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
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

// Config configures one node's membership and lease loop.
type Config struct {
	// NodeID is this node's id (docs/design.md §1: --node-id).
	NodeID string
	// AdvertiseURL is the base URL other nodes and clients use to reach
	// this node (--advertise), e.g. "http://10.0.0.5:8181".
	AdvertiseURL string
	// Roles is a subset of {indexer, server}. Default: both.
	Roles []string
	// LeaseTTL is the `lease_ttl` of docs/design.md §3.1 (default 30s). The node
	// renews its row and leases every LeaseTTL/3.
	LeaseTTL time.Duration
	// MaxPartitions is the `max_partitions` of docs/design.md §3.3: a cap on the
	// partition leases this node holds across all tables (0 = no cap).
	MaxPartitions int
	// SafetyMargin is subtracted from the trust window (docs/design.md §3.2).
	// Default LeaseTTL/6.
	SafetyMargin time.Duration
	// Registerer receives the lease metrics (mink_lease_*_total,
	// mink_leases_held, mink_cluster_rounds_total); nil registers nothing.
	Registerer prometheus.Registerer
	Logger     *slog.Logger
}

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
}
