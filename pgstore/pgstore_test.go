package pgstore_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/pgstore"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestMigrateTwiceIsANoop(t *testing.T) {
	pool, _ := pgtest.Pool(t)
	require.NoError(t, pgstore.Migrate(context.Background(), pool))
	var n int
	require.NoError(t, pool.QueryRow(context.Background(),
		`SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name IN ('nodes','leases','tables','ranges','data_files','snapshots','metadata_files')`).Scan(&n))
	require.Equal(t, 7, n)
}
