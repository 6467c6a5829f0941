package catalog_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/catalog"
	"github.com/minkhq/mink/internal/netproxy"
	"github.com/minkhq/mink/internal/pgtest"
)

// TestUnavailableConnectionsCut: Postgres goes away under a pool that holds
// open connections. The first requests fail on those pooled connections
// (reset, or closed mid-answer), the next ones on connecting: all answer
// 503, none 500 (docs/design.md §3.4).
func TestUnavailableConnectionsCut(t *testing.T) {
	_, real := pgtest.Pool(t) // migrated
	u, err := url.Parse(real)
	require.NoError(t, err)
	proxy, err := netproxy.New(u.Host)
	require.NoError(t, err)
	t.Cleanup(func() { proxy.Close() })
	u.Host = proxy.Addr()
	pool, err := pgxpool.New(context.Background(), u.String())
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	srvURL := serve(t, catalog.Config{QueryTimeout: 2 * time.Second, RetryAfter: 500 * time.Millisecond}, pool)

	rsp, _ := do(t, "GET", srvURL+"/v1/namespaces")
	require.Equal(t, http.StatusOK, rsp.StatusCode)
	require.Positive(t, pool.Stat().IdleConns(), "the pool keeps a connection")

	proxy.Cut()
	requireUnavailable(t, srvURL)

	proxy.Restore()
	require.Eventually(t, func() bool {
		rsp, _ := do(t, "GET", srvURL+"/v1/namespaces")
		return rsp.StatusCode == http.StatusOK
	}, 10*time.Second, 50*time.Millisecond)
}
