// Package pgtest gives tests a real PostgreSQL, found the way users find
// it: MINK_TEST_POSTGRES_URL when set, otherwise one throwaway cluster from
// the system's binaries for the whole test binary (pglocal.StartPostgres).
// Each test gets a schema of its own, migrated, and dropped at cleanup.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/minkhq/mink/internal/pglocal"
	"github.com/minkhq/mink/pgstore"
)

// EnvURL names the variable that points tests at an existing server.
const EnvURL = "MINK_TEST_POSTGRES_URL"

// Run runs a package's tests with a PostgreSQL server: the one named by
// MINK_TEST_POSTGRES_URL, or a throwaway cluster started here and stopped
// when the tests end. It returns m.Run's code.
func Run(m *testing.M) int {
	if os.Getenv(EnvURL) != "" {
		return m.Run()
	}
	pg, err := pglocal.StartPostgres(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, "pgtest:", err)
		return 1
	}
	defer pg.Stop()
	os.Setenv(EnvURL, pg.URL)
	return m.Run()
}

// Schema creates a fresh schema and returns a connection URL whose
// search_path selects it, so that separate processes (nodes) share it. The
// schema is dropped when the test ends.
func Schema(t testing.TB) string {
	t.Helper()
	base := os.Getenv(EnvURL)
	if base == "" {
		t.Fatalf("pgtest: %s is not set; call testkit.MainPostgres from TestMain", EnvURL)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "t_" + hex.EncodeToString(b[:])
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("pgtest: connect: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("pgtest: create schema: %v", err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), base)
		if err != nil {
			return
		}
		defer c.Close(context.Background())
		_, _ = c.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// Pool returns a migrated pool on a fresh schema, closed at cleanup.
func Pool(t testing.TB) (*pgxpool.Pool, string) {
	t.Helper()
	u := Schema(t)
	pool, err := pgstore.Open(context.Background(), pgstore.Config{URL: u})
	if err != nil {
		t.Fatalf("pgtest: open: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool, u
}
