package testkit

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
)

// Rows is what Column needs of a pool, a connection or a transaction.
type Rows interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// Column runs sql, whose rows have one column, and returns its values in
// row order.
func Column[T any](t testing.TB, db Rows, sql string, args ...any) []T {
	t.Helper()
	rows, err := db.Query(context.Background(), sql, args...)
	if err != nil {
		t.Fatalf("testkit: %v", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[T])
	if err != nil {
		t.Fatalf("testkit: %v", err)
	}
	return out
}
