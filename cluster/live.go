package cluster

import (
	"context"
	_ "embed"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed sql/node_live.sql
var nodeLiveSQL string

// LiveCacheTTL is how long a Senders check read from PostgreSQL is
// trusted (auth.CacheTTL's bound): a node that left stops being a sender
// within it.
const LiveCacheTTL = time.Second

// Senders answers whether a node id is a live member, for requests one
// node forwards to another (docs/design.md §5): the receiver's own view of
// the members first (memory), else PostgreSQL (a node that joined since
// the view), whose answer is kept LiveCacheTTL per id. It is safe for
// concurrent use.
type Senders struct {
	pool    *pgxpool.Pool
	members func() []Member

	mu   sync.Mutex
	read map[string]senderRead
}

type senderRead struct {
	live bool
	at   time.Time
}

// NewSenders returns the check over pool and members (the node's view;
// nil: none).
func NewSenders(pool *pgxpool.Pool, members func() []Member) *Senders {
	if members == nil {
		members = func() []Member { return nil }
	}
	return &Senders{pool: pool, members: members, read: map[string]senderRead{}}
}

// Live reports whether node id is a live member. Errors are PostgreSQL's.
func (s *Senders) Live(ctx context.Context, id string) (bool, error) {
	if slices.ContainsFunc(s.members(), func(m Member) bool { return m.ID == id }) {
		return true, nil
	}
	now := time.Now()
	s.mu.Lock()
	c, ok := s.read[id]
	s.mu.Unlock()
	if ok && now.Sub(c.at) < LiveCacheTTL {
		return c.live, nil
	}
	var live bool
	if err := s.pool.QueryRow(ctx, nodeLiveSQL, id).Scan(&live); err != nil {
		return false, fmt.Errorf("cluster: is node %s live: %w", id, err)
	}
	s.mu.Lock()
	if len(s.read) > 1000 {
		clear(s.read) // a bound: ids are few
	}
	s.read[id] = senderRead{live: live, at: now}
	s.mu.Unlock()
	return live, nil
}
