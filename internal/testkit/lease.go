package testkit

import (
	"context"
	_ "embed"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/minkhq/mink/cluster"
)

//go:embed sql/lease_take.sql
var sqlLeaseTake string

// Querier is what TakeLease needs of a pool, a connection or a transaction.
type Querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// TakeLease gives the lease of scope to holder for ttl, under the next
// epoch, whoever holds it now (sql/lease_take.sql), and returns it as a
// job receives it. The error is pgx.ErrNoRows when there is no such
// scope.
func TakeLease(ctx context.Context, db Querier, scope, holder string, ttl time.Duration) (cluster.Lease, error) {
	var l cluster.Lease
	err := db.QueryRow(ctx, sqlLeaseTake, scope, holder, ttl.Microseconds()).
		Scan(&l.Scope, &l.TableID, &l.Kind, &l.Partition, &l.Holder, &l.Epoch)
	if err != nil {
		return cluster.Lease{}, fmt.Errorf("take lease %s: %w", scope, err)
	}
	return l, nil
}

// Take is TakeLease for a minute, failing t on an error.
func Take(t testing.TB, db Querier, scope, holder string) cluster.Lease {
	t.Helper()
	l, err := TakeLease(context.Background(), db, scope, holder, time.Minute)
	if err != nil {
		t.Fatalf("testkit: %v", err)
	}
	return l
}
