package admin_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/admin"
	"github.com/minkhq/mink/auth"
	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/internal/testkit"
)

// TestForwardToNode: /admin/v1/nodes/{id}/… on another node is proxied to
// it over https, signed; the receiver refuses a request marked forwarded
// that no node of the cluster signed, and never forwards a second time.
func TestForwardToNode(t *testing.T) {
	pool, _ := pgtest.Pool(t)
	ctx := context.Background()
	key := auth.DeriveKey([]byte("admin test cluster"), auth.PurposeForward)
	local := func(node string) func(string) (any, bool) {
		return func(what string) (any, bool) { return map[string]string{"node": node, "what": what}, what == "cache" }
	}
	ts2 := httptest.NewTLSServer(admin.New(pool, nil, admin.Config{NodeID: "n2", ForwardKey: key, Local: local("n2")}))
	defer ts2.Close()
	roots := x509.NewCertPool()
	roots.AddCert(ts2.Certificate())
	ts1 := httptest.NewServer(admin.New(pool, nil, admin.Config{NodeID: "n1", ForwardKey: key, Local: local("n1"),
		PeerTLS: &tls.Config{RootCAs: roots}}))
	defer ts1.Close()
	untrusting := httptest.NewServer(admin.New(pool, nil, admin.Config{NodeID: "n0", ForwardKey: key}))
	defer untrusting.Close()
	for id, url := range map[string]string{"n1": ts1.URL, "n2": ts2.URL, "n3": "http://127.0.0.1:1"} {
		_, err := pool.Exec(ctx, `INSERT INTO nodes (id, instance, advertise_url, roles, expires_at)
			VALUES ($1, 'test', $2, ARRAY['server'], now() + interval '1 hour')`, id, url)
		require.NoError(t, err)
	}
	send := func(client *http.Client, url string, hdr http.Header) (int, map[string]string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, url, nil)
		require.NoError(t, err)
		for k, v := range hdr {
			req.Header[k] = v
		}
		resp, b := testkit.SendWith(t, client, req)
		var out map[string]string
		require.NoError(t, json.Unmarshal(b, &out), "%s", b)
		return resp.StatusCode, out
	}

	code, body := send(http.DefaultClient, ts1.URL+"/admin/v1/nodes/n2/cache", nil)
	require.Equal(t, http.StatusOK, code, body)
	require.Equal(t, map[string]string{"node": "n2", "what": "cache"}, body)
	code, body = send(http.DefaultClient, untrusting.URL+"/admin/v1/nodes/n2/cache", nil)
	require.Equal(t, http.StatusBadGateway, code, body)
	require.Contains(t, body["error"], "certificate")

	client := ts2.Client()
	path := "/admin/v1/nodes/n2/cache"
	signedTo := func(p, to string) http.Header {
		req, err := http.NewRequest(http.MethodGet, ts2.URL+p, nil)
		require.NoError(t, err)
		auth.SignForward(key, req, "n1", to)
		return req.Header
	}
	signed := func(p string) http.Header { return signedTo(p, "n2") }
	// A node of the cluster signed it: answered.
	code, body = send(client, ts2.URL+path, signed(path))
	require.Equal(t, http.StatusOK, code, body)
	require.Equal(t, "n2", body["node"])

	old := time.Now().Add(-90 * time.Second).Unix() // within the old ±5 min, past ±60 s
	m := hmac.New(sha256.New, key)
	m.Write(auth.ForwardMessage(http.MethodGet, path, "n1", "n2", old))
	stale := http.Header{auth.ForwardedHeader: {"n1"}, auth.ForwardTimeHeader: {strconv.FormatInt(old, 10)},
		auth.ForwardSignatureHeader: {hex.EncodeToString(m.Sum(nil))}}
	badSig := signed(path)
	badSig.Set(auth.ForwardSignatureHeader, hex.EncodeToString(make([]byte, 32)))
	for name, c := range map[string]struct {
		path string
		hdr  http.Header
	}{
		"no signature":       {path, http.Header{auth.ForwardedHeader: {"n1"}}},
		"bad signature":      {path, badSig},
		"replayed elsewhere": {"/admin/v1/nodes/n2/leases", signed(path)},
		// Signed for node n3 (same path), replayed to n2.
		"replayed to another node": {path, signedTo(path, "n3")},
		"stale":                    {path, stale},
		// Signed with the cluster's key by an id that is no live member.
		"not a member": {path, func() http.Header {
			req, err := http.NewRequest(http.MethodGet, ts2.URL+path, nil)
			require.NoError(t, err)
			auth.SignForward(key, req, "left", "n2")
			return req.Header
		}()},
		"other route": {"/admin/v1/tables", http.Header{auth.ForwardedHeader: {"n1"}}},
	} {
		t.Run(name, func(t *testing.T) {
			code, body := send(client, ts2.URL+c.path, c.hdr)
			require.Equal(t, http.StatusForbidden, code, body)
			require.Equal(t, "the request is marked forwarded but no node of this cluster signed it", body["error"])
		})
	}

	// Forwarded here for another node: no second hop.
	code, body = send(client, ts2.URL+"/admin/v1/nodes/n3/cache", signed("/admin/v1/nodes/n3/cache"))
	require.Equal(t, http.StatusNotFound, code, body)
	require.Equal(t, "node n1 forwarded a request for node n3 to node n2", body["error"])
}
