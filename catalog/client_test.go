package catalog_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sync"
	"testing"

	"github.com/apache/iceberg-go"
	icecatalog "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/catalog"
)

// captureS3Props registers, for the test, an "s3" file IO that records the
// properties an engine's file IO is opened with and opens nothing.
func captureS3Props(t *testing.T) func() map[string]string {
	var (
		mu    sync.Mutex
		props map[string]string
	)
	iceio.Unregister("s3")
	iceio.Register("s3", func(_ context.Context, _ *url.URL, p map[string]string) (iceio.IO, error) {
		mu.Lock()
		defer mu.Unlock()
		props = maps.Clone(p)
		return nil, errors.New("test: no S3 here")
	})
	t.Cleanup(func() { iceio.Unregister("s3") })
	return func() map[string]string {
		mu.Lock()
		defer mu.Unlock()
		return props
	}
}

func TestIcebergGoClient(t *testing.T) {
	f := newFixture(t, catalog.Config{})
	orders := f.addTable("shop.eu", "orders")
	f.addTable("shop.eu", "orders~dlq")
	f.addTable("shop", "customers")
	f.addTable("logs", "events")
	ctx := context.Background()

	cat, err := rest.NewCatalog(ctx, "mink", f.url)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cat.Close() })

	nss, err := cat.ListNamespaces(ctx, nil)
	require.NoError(t, err)
	require.Equal(t, []table.Identifier{{"logs"}, {"shop"}}, nss)
	nss, err = cat.ListNamespaces(ctx, table.Identifier{"shop"})
	require.NoError(t, err)
	require.Equal(t, []table.Identifier{{"shop", "eu"}}, nss)
	_, err = cat.ListNamespaces(ctx, table.Identifier{"nope"})
	require.ErrorIs(t, err, icecatalog.ErrNoSuchNamespace)

	var ids []table.Identifier
	for id, err := range cat.ListTables(cat.SetPageSize(ctx, 1), table.Identifier{"shop", "eu"}) {
		require.NoError(t, err)
		ids = append(ids, id)
	}
	require.Equal(t, []table.Identifier{{"shop", "eu", "orders"}, {"shop", "eu", "orders~dlq"}}, ids)
	for _, err := range cat.ListTables(ctx, table.Identifier{"nope"}) {
		require.ErrorIs(t, err, icecatalog.ErrNoSuchNamespace)
	}

	props, err := cat.LoadNamespaceProperties(ctx, table.Identifier{"shop", "eu"})
	require.NoError(t, err)
	require.Equal(t, iceberg.Properties{"location": "s3://mink/shop/eu"}, props)

	ok, err := cat.CheckNamespaceExists(ctx, table.Identifier{"shop", "eu"})
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = cat.CheckNamespaceExists(ctx, table.Identifier{"shop", "us"})
	require.NoError(t, err)
	require.False(t, ok)
	ok, err = cat.CheckTableExists(ctx, table.Identifier{"shop", "eu", "orders"})
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = cat.CheckTableExists(ctx, table.Identifier{"shop", "eu", "returns"})
	require.NoError(t, err)
	require.False(t, ok)

	fsProps := captureS3Props(t)
	tbl, err := cat.LoadTable(ctx, table.Identifier{"shop", "eu", "orders"})
	require.NoError(t, err)
	want, err := table.ParseMetadataBytes(orders.metadata)
	require.NoError(t, err)
	require.Equal(t, orders.metadataLocation, tbl.MetadataLocation())
	require.Equal(t, orders.location, tbl.Location())
	require.True(t, want.CurrentSchema().Equals(tbl.Schema()), "schema %s", tbl.Schema())
	require.Equal(t, "_kafka", tbl.Schema().Field(0).Name)
	require.Equal(t, want.Properties(), tbl.Properties())
	require.Equal(t, want.TableUUID(), tbl.Metadata().TableUUID())
	require.True(t, want.PartitionSpec().Equals(tbl.Spec()))

	// The engine's S3 client is pointed at Mink by the table's config.
	_, err = tbl.FS(ctx)
	require.Error(t, err)
	got := fsProps()
	require.NotNil(t, got)
	for k, v := range map[string]string{
		"s3.endpoint":          advertise,
		"s3.path-style-access": "true",
		"s3.region":            "us-east-1",
		"client.region":        "us-east-1",
		"s3.access-key-id":     "mink",
		"s3.secret-access-key": "mink",
	} {
		require.Equal(t, v, got[k], k)
	}

	_, err = cat.LoadTable(ctx, table.Identifier{"shop", "eu", "returns"})
	require.ErrorIs(t, err, icecatalog.ErrNoSuchTable)

	// The client negotiated the endpoints: it refuses writes itself.
	_, err = cat.CreateTable(ctx, table.Identifier{"shop", "eu", "returns"}, tbl.Schema())
	require.ErrorIs(t, err, rest.ErrEndpointNotSupported)
	require.ErrorIs(t, cat.DropTable(ctx, table.Identifier{"shop", "eu", "orders"}), rest.ErrEndpointNotSupported)
	require.ErrorIs(t, cat.CreateNamespace(ctx, table.Identifier{"x"}, nil), rest.ErrEndpointNotSupported)
	ok, err = cat.CheckTableExists(ctx, table.Identifier{"shop", "eu", "orders"})
	require.NoError(t, err)
	require.True(t, ok, "the table is still there")
}

// TestIcebergGoClientWithoutEndpoints plays a client that does not
// negotiate endpoints (a proxy drops them from /v1/config): its writes reach
// Mink and fail as forbidden.
func TestIcebergGoClientWithoutEndpoints(t *testing.T) {
	f := newFixture(t, catalog.Config{})
	f.addTable("shop", "orders")
	ctx := context.Background()

	target, err := url.Parse(f.url)
	require.NoError(t, err)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := r.Clone(r.Context())
		req.RequestURI = ""
		req.URL.Scheme, req.URL.Host = target.Scheme, target.Host
		rsp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer rsp.Body.Close()
		body, _ := io.ReadAll(rsp.Body)
		if r.URL.Path == "/v1/config" {
			var cfg map[string]any
			require.NoError(t, json.Unmarshal(body, &cfg))
			delete(cfg, "endpoints")
			body, _ = json.Marshal(cfg)
		}
		maps.Copy(w.Header(), rsp.Header)
		w.Header().Del("Content-Length")
		w.WriteHeader(rsp.StatusCode)
		_, _ = w.Write(body)
	}))
	t.Cleanup(proxy.Close)

	cat, err := rest.NewCatalog(ctx, "mink", proxy.URL)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cat.Close() })

	tbl, err := cat.LoadTable(ctx, table.Identifier{"shop", "orders"})
	require.NoError(t, err)
	_, err = cat.CreateTable(ctx, table.Identifier{"shop", "returns"}, tbl.Schema())
	require.ErrorIs(t, err, rest.ErrForbidden)
	require.ErrorContains(t, err, "read-only")
	require.ErrorIs(t, cat.DropTable(ctx, table.Identifier{"shop", "orders"}), rest.ErrForbidden)
	require.ErrorIs(t, cat.CreateNamespace(ctx, table.Identifier{"x"}, nil), rest.ErrForbidden)
	_, err = cat.RenameTable(ctx, table.Identifier{"shop", "orders"}, table.Identifier{"shop", "o2"})
	require.ErrorIs(t, err, rest.ErrForbidden)

	tables := slices.Collect(func(yield func(table.Identifier) bool) {
		for id, err := range cat.ListTables(ctx, table.Identifier{"shop"}) {
			require.NoError(t, err)
			if !yield(id) {
				return
			}
		}
	})
	require.Equal(t, []table.Identifier{{"shop", "orders"}}, tables)
}
