package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/pgstore"
)

func TestMigrateTwiceIsANoop(t *testing.T) {
	pool, _ := pgtest.Pool(t)
	require.NoError(t, pgstore.Migrate(context.Background(), pool))
	var n int
	require.NoError(t, pool.QueryRow(context.Background(),
		`SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name IN ('nodes','leases','tables','ranges','data_files','snapshots','metadata_files')`).Scan(&n))
	require.Equal(t, 7, n)
}

// A transaction left idle (a paused node) holding a lease row FOR SHARE is
// ended by the server after IdleInTransactionTimeout, so another node's
// take of the lease goes through instead of waiting forever.
func TestIdleTransactionReleasesLeaseRow(t *testing.T) {
	ctx := context.Background()
	_, url := pgtest.Pool(t)
	paused, err := pgstore.Open(ctx, pgstore.Config{URL: url, IdleInTransactionTimeout: 300 * time.Millisecond})
	require.NoError(t, err)
	defer paused.Close()
	other, err := pgstore.Open(ctx, pgstore.Config{URL: url})
	require.NoError(t, err)
	defer other.Close()
	_, err = other.Exec(ctx, `
		INSERT INTO tables (namespace, name, topic, value_format, schema_json, table_uuid, location, metadata_location)
		VALUES ('t', 'x', 'x', 'raw', '{}', gen_random_uuid(), 's3://m/t/x', 's3://m/t/x/metadata/00000-a.metadata.json')`)
	require.NoError(t, err)
	_, err = other.Exec(ctx, `INSERT INTO leases (scope, table_id, kind) SELECT '1/writer', id, 'writer' FROM tables`)
	require.NoError(t, err)

	tx, err := paused.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, `SELECT * FROM leases WHERE scope = '1/writer' FOR SHARE`)
	require.NoError(t, err)
	// The node stops here; its session is idle in the transaction.
	start := time.Now()
	tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err = other.Exec(tctx, `UPDATE leases SET holder = 'b', epoch = epoch + 1 WHERE scope = '1/writer'`)
	require.NoError(t, err, "the take waited for the idle transaction")
	require.Less(t, time.Since(start), 4*time.Second)
	require.GreaterOrEqual(t, time.Since(start), 250*time.Millisecond)
	_, err = tx.Exec(ctx, `SELECT 1`)
	require.Error(t, err, "the server ended the idle transaction")
	_ = tx.Rollback(ctx) // returns the connection to the pool
}
