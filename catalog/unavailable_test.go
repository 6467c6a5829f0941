package catalog_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/catalog"
	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/outage"
	"github.com/minkhq/mink/tables"
)

// readPaths are requests that need Postgres.
var readPaths = []string{
	"/v1/namespaces",
	"/v1/namespaces?parent=a",
	"/v1/namespaces/a",
	"/v1/namespaces/a/tables",
	"/v1/namespaces/a/tables/t",
	"/v1/namespaces/a/views",
}

func requireUnavailable(t *testing.T, srvURL string) {
	t.Helper()
	for _, path := range readPaths {
		start := time.Now()
		rsp, body := do(t, "GET", srvURL+path)
		requireError(t, rsp, body, http.StatusServiceUnavailable, "ServiceUnavailableException")
		require.Equal(t, "1", rsp.Header.Get("Retry-After"), path)
		require.Less(t, time.Since(start), 3*time.Second, path)

	}
	for _, path := range []string{"/v1/namespaces/a", "/v1/namespaces/a/tables/t"} {
		rsp, body := do(t, "HEAD", srvURL+path)
		require.Equal(t, http.StatusServiceUnavailable, rsp.StatusCode, path)
		require.Equal(t, "1", rsp.Header.Get("Retry-After"), path)
		require.Empty(t, body)
	}
	// What needs no Postgres still answers.
	rsp, _ := do(t, "GET", srvURL+"/v1/config")
	require.Equal(t, http.StatusOK, rsp.StatusCode)
}

// serve serves a catalog over pool on an httptest server and returns its
// URL; cfg.AdvertiseURL defaults to advertise.
func serve(t *testing.T, cfg catalog.Config, pool *pgxpool.Pool) string {
	t.Helper()
	if cfg.AdvertiseURL == "" {
		cfg.AdvertiseURL = advertise
	}
	h, err := catalog.New(cfg, pool)
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestUnavailable(t *testing.T) {
	cfg := catalog.Config{QueryTimeout: 200 * time.Millisecond, RetryAfter: 500 * time.Millisecond}

	t.Run("refused", func(t *testing.T) {
		// A port nobody listens on: connecting fails at once.
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := l.Addr().String()
		require.NoError(t, l.Close())
		pool, err := pgxpool.New(context.Background(), fmt.Sprintf("postgres://mink@%s/mink?sslmode=disable", addr))
		require.NoError(t, err)
		t.Cleanup(pool.Close)
		requireUnavailable(t, serve(t, cfg, pool))
	})

	t.Run("silent", func(t *testing.T) {
		// A server that accepts connections and never answers: only the
		// query timeout stops the request.
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		t.Cleanup(func() { _ = l.Close() })
		go func() {
			var conns []net.Conn
			defer func() {
				for _, c := range conns {
					_ = c.Close()
				}
			}()
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				conns = append(conns, c)
			}
		}()
		pool, err := pgxpool.New(context.Background(), fmt.Sprintf("postgres://mink@%s/mink?sslmode=disable", l.Addr()))
		require.NoError(t, err)
		t.Cleanup(pool.Close)
		requireUnavailable(t, serve(t, cfg, pool))
	})

	t.Run("closed pool", func(t *testing.T) {
		pool, _ := pgtest.Pool(t)
		url := serve(t, cfg, pool)
		rsp, _ := do(t, "GET", url+"/v1/namespaces")
		require.Equal(t, http.StatusOK, rsp.StatusCode)
		pool.Close()
		requireUnavailable(t, url)
	})
}

func TestLoader(t *testing.T) {
	var loaderErr atomic.Pointer[error]
	f := newFixture(t, catalog.Config{Loader: catalog.LoaderFunc(
		func(ctx context.Context, committed catalog.Table) (catalog.Table, error) {
			if err := loaderErr.Load(); err != nil {
				return catalog.Table{}, *err
			}
			// A child snapshot: another location, other JSON.
			var md map[string]any
			if err := json.Unmarshal(committed.Metadata, &md); err != nil {
				return catalog.Table{}, err
			}
			md["properties"] = map[string]string{"mink.tail": committed.Name}
			b, err := json.Marshal(md)
			if err != nil {
				return catalog.Table{}, err
			}
			committed.MetadataLocation += ".tail"
			committed.Metadata = b
			return committed, nil
		})})
	s := f.addTable("a.b", "t")

	rsp, body := f.do("GET", "/v1/namespaces/a%1Fb/tables/t")
	require.Equal(t, http.StatusOK, rsp.StatusCode, "body: %s", body)
	res := decode[struct {
		MetadataLocation string `json:"metadata-location"`
		Metadata         struct {
			Properties map[string]string `json:"properties"`
		} `json:"metadata"`
	}](t, body)
	require.Equal(t, s.metadataLocation+".tail", res.MetadataLocation)
	require.Equal(t, map[string]string{"mink.tail": "t"}, res.Metadata.Properties)
	etag := rsp.Header.Get("ETag")
	rsp, _ = f.do("GET", "/v1/namespaces/a%1Fb/tables/t", "If-None-Match", etag)
	require.Equal(t, http.StatusNotModified, rsp.StatusCode)

	unavailable := fmt.Errorf("list offsets: %w", outage.ErrUnavailable)
	loaderErr.Store(&unavailable)
	rsp, body = f.do("GET", "/v1/namespaces/a%1Fb/tables/t")
	requireError(t, rsp, body, http.StatusServiceUnavailable, "ServiceUnavailableException")
	require.Equal(t, "2", rsp.Header.Get("Retry-After"))

	boom := errors.New("boom")
	loaderErr.Store(&boom)
	rsp, body = f.do("GET", "/v1/namespaces/a%1Fb/tables/t")
	requireError(t, rsp, body, http.StatusInternalServerError, "InternalServerError")
	require.NotContains(t, string(body), "boom")

	// The table was deleted between its read and the load's commit: 404,
	// as for a table that does not exist, on a load and on a plan.
	gone := fmt.Errorf("commit: a.b.t: %w", tables.ErrNotFound)
	loaderErr.Store(&gone)
	rsp, body = f.do("GET", "/v1/namespaces/a%1Fb/tables/t")
	requireError(t, rsp, body, http.StatusNotFound, "NoSuchTableException")
	rsp, body = post(t, f.url+"/v1/namespaces/a%1Fb/tables/t/plan", "{}")
	requireError(t, rsp, body, http.StatusNotFound, "NoSuchTableException")
}
