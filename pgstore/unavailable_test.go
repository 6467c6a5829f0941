package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/outage"
	"github.com/minkhq/mink/pgstore"
)

// Unavailable marks what says Postgres could not be reached, and only that,
// keeping the message.
func TestUnavailable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, refused := pgx.Connect(ctx, "postgres://nobody@127.0.0.1:1/none?connect_timeout=2")
	require.Error(t, refused)
	for _, tc := range []struct {
		err         error
		unavailable bool
	}{
		{refused, true},
		{&pgconn.PgError{Code: "08006"}, true}, // connection failure
		{&pgconn.PgError{Code: "57P01"}, true}, // admin shutdown
		{&pgconn.PgError{Code: "40001"}, true}, // serialization failure: retry
		{fmt.Errorf("query: %w", context.DeadlineExceeded), true},
		{&pgconn.PgError{Code: "42601"}, false}, // syntax error
		{pgx.ErrNoRows, false},
		{context.Canceled, false},
		{errors.New("boom"), false},
	} {
		got := pgstore.Unavailable(tc.err)
		require.Equal(t, tc.unavailable, errors.Is(got, outage.ErrUnavailable), "%v", tc.err)
		require.Equal(t, tc.err.Error(), got.Error())
		require.ErrorIs(t, got, tc.err)
	}
	require.NoError(t, pgstore.Unavailable(nil))
}
