package pgstore_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/pgstore"
)

// TestTimestamptz stores every Iceberg timestamp (int64 microseconds) into
// a timestamptz column: values Postgres holds come back exact (years 9999,
// 294247 and 4714 BC included), values below its range become NULL, and no
// value fails the write.
func TestTimestamptz(t *testing.T) {
	ctx := context.Background()
	pool, _ := pgtest.Pool(t)
	_, err := pool.Exec(ctx, `CREATE TABLE ts_test (us bigint, ts timestamptz)`)
	require.NoError(t, err)
	cases := []struct {
		us    int64
		exact bool
	}{
		{-1000, true}, {0, true}, {253402300799999000, true}, {9223372036855000, true},
		{9223372036854775000, true}, {math.MaxInt64, true},
		{pgstore.MinTimestamptzMicros, true},
		{pgstore.MinTimestamptzMicros - 1, false},
		{-9223372036854775000, false}, {math.MinInt64, false},
	}
	for _, c := range cases {
		_, err := pool.Exec(ctx, `INSERT INTO ts_test VALUES ($1, $2)`, c.us, pgstore.Timestamptz(c.us))
		require.NoError(t, err, "%d", c.us)
		var got *time.Time
		require.NoError(t, pool.QueryRow(ctx, `SELECT ts FROM ts_test WHERE us = $1`, c.us).Scan(&got))
		if !c.exact {
			require.Nil(t, got, "%d", c.us)
			continue
		}
		require.NotNil(t, got, "%d", c.us)
		require.Equal(t, c.us, got.UnixMicro(), "%d read back by pgx", c.us)
	}
	// As Postgres has them.
	for us, want := range map[int64]string{
		253402300799999000:           "9999-12-31 23:59:59.999",
		math.MaxInt64:                "294247-01-10 04:00:54.775807",
		pgstore.MinTimestamptzMicros: "4714-11-24 00:00:00 BC",
	} {
		var s string
		require.NoError(t, pool.QueryRow(ctx, `SELECT (ts AT TIME ZONE 'UTC')::text FROM ts_test WHERE us = $1`, us).Scan(&s))
		require.Equal(t, want, s)
	}
}
