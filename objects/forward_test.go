package objects_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/auth"
	"github.com/minkhq/mink/cluster"
	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/objects"
)

// lateHandler lets a listener start before the handler it serves exists,
// so members can name its URL.
type lateHandler struct{ h atomic.Pointer[http.Handler] }

func (l *lateHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	(*l.h.Load()).ServeHTTP(w, r)
}

// ownedBy returns a data file key that owner owns among members.
func ownedBy(t *testing.T, members []cluster.Member, owner string, from int) string {
	t.Helper()
	for i := from; i < from+1000; i++ {
		k := dataKey(0, i*100)
		if o, ok := cluster.Owner(members, k); ok && o.ID == owner {
			return k
		}
	}
	t.Fatal("no key owned by " + owner)
	return ""
}

// TestForwarding: a read on a non-owner is served by the owner, which
// builds and caches; with the owner gone or silent the non-owner builds.
func TestForwarding(t *testing.T) {
	pool, _ := pgtest.Pool(t)
	ha, hb := &lateHandler{}, &lateHandler{}
	tsA, tsB := httptest.NewServer(ha), httptest.NewServer(hb)
	defer tsA.Close()
	members := []cluster.Member{
		{ID: "a", AdvertiseURL: tsA.URL, Roles: []string{cluster.RoleServer, cluster.RoleIndexer}},
		{ID: "b", AdvertiseURL: tsB.URL + "/", Roles: []string{cluster.RoleServer}},
		{ID: "c", AdvertiseURL: "http://127.0.0.1:1", Roles: []string{cluster.RoleIndexer}}, // never an owner
	}
	view := func() []cluster.Member { return members }
	ba, bb := newFakeBuilder(), newFakeBuilder()
	newServer := func(id string, b *fakeBuilder) *objects.Server {
		insertTable(t, pool, "demo", "quakes")
		s, err := objects.New(objects.Config{NodeID: id, CacheDir: t.TempDir(), Auth: auth.ModeNone, ForwardKey: forwardKey,
			ForwardConnectTimeout: time.Second, ForwardHeaderTimeout: 500 * time.Millisecond}, pool, b, view)
		require.NoError(t, err)
		t.Cleanup(s.Close)
		return s
	}
	sa, sb := newServer("a", ba), newServer("b", bb)
	var hA, hB http.Handler = sa, sb
	ha.h.Store(&hA)
	hb.h.Store(&hB)

	keyB := ownedBy(t, members, "b", 0)
	data := content(21, 200_000)
	ba.add(keyB, data)
	bb.add(keyB, data)

	// Full and range reads on a, the non-owner, are served by b.
	resp, body := do(t, http.MethodGet, tsA.URL+"/mink/"+keyB, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, data, body)
	require.Equal(t, etag(data), resp.Header.Get("ETag"))
	resp, body = do(t, http.MethodGet, tsA.URL+"/mink/"+keyB, map[string]string{"Range": "bytes=-1000"})
	require.Equal(t, http.StatusPartialContent, resp.StatusCode)
	require.Equal(t, data[len(data)-1000:], body)
	resp, _ = do(t, http.MethodGet, tsA.URL+"/mink/"+keyB, map[string]string{"If-None-Match": etag(data)})
	require.Equal(t, http.StatusNotModified, resp.StatusCode)
	resp, body = do(t, http.MethodHead, tsA.URL+"/mink/"+keyB, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Empty(t, body)
	require.Equal(t, "200000", resp.Header.Get("Content-Length"))
	require.EqualValues(t, 1, bb.calls.Load(), "the owner built it once")
	require.Zero(t, ba.calls.Load(), "the non-owner did not build")
	require.EqualValues(t, 4, flushedStats(sa).Forwards)
	require.Equal(t, 1, flushedStats(sb).Files)
	require.Zero(t, flushedStats(sa).Files)

	// A missing key on the owner is a NoSuchKey passed back.
	missing := ownedBy(t, members, "b", 2000)
	resp, body = do(t, http.MethodGet, tsA.URL+"/mink/"+missing, nil)
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	require.Equal(t, "NoSuchKey", parseS3Error(t, body).Code)

	// A read forwarded to a node that thinks it is not the owner is served
	// there all the same (no second hop).
	keyA := ownedBy(t, members, "a", 0)
	bb.add(keyA, content(22, 100))
	resp, body = do(t, http.MethodGet, tsB.URL+"/mink/"+keyA, forwarded(t, http.MethodGet, tsB.URL+"/mink/"+keyA, "a", "b"))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, content(22, 100), body)
	require.Zero(t, flushedStats(sb).Forwards)

	// The owner stops answering: a builds it itself (and caches it).
	tsB.Close()
	keyB2 := ownedBy(t, members, "b", 3000)
	data2 := content(23, 5000)
	ba.add(keyB2, data2)
	before := ba.calls.Load()
	resp, body = do(t, http.MethodGet, tsA.URL+"/mink/"+keyB2, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, data2, body)
	require.Equal(t, before+1, ba.calls.Load())
	require.EqualValues(t, 1, flushedStats(sa).ForwardFailures)
	resp, body = do(t, http.MethodGet, tsA.URL+"/mink/"+keyB2, map[string]string{"Range": "bytes=-10"})
	require.Equal(t, http.StatusPartialContent, resp.StatusCode)
	require.Equal(t, data2[len(data2)-10:], body)
	require.Equal(t, before+1, ba.calls.Load(), "the fallback copy is cached")

	// While b is backed off, a does not even try it.
	keyB3 := ownedBy(t, members, "b", 4000)
	ba.add(keyB3, content(24, 10))
	forwards := flushedStats(sa).Forwards
	resp, _ = do(t, http.MethodGet, tsA.URL+"/mink/"+keyB3, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, forwards, flushedStats(sa).Forwards)
}

// TestForwardSilentOwner: an owner that accepts the connection but sends
// no headers in time is given up on, and the read is built locally.
func TestForwardSilentOwner(t *testing.T) {
	pool, _ := pgtest.Pool(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	go func() { // accept and never answer
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	members := []cluster.Member{
		{ID: "a", AdvertiseURL: "http://unused", Roles: []string{cluster.RoleServer}},
		{ID: "b", AdvertiseURL: "http://" + ln.Addr().String(), Roles: []string{cluster.RoleServer}},
	}
	b := newFakeBuilder()
	n := startNode(t, "a", pool, b, func() []cluster.Member { return members }, func(c *objects.Config) {
		c.ForwardHeaderTimeout = 300 * time.Millisecond
	})
	k := ownedBy(t, members, "b", 0)
	b.add(k, content(30, 777))
	start := time.Now()
	resp, body := do(t, http.MethodGet, n.ts.URL+"/mink/"+k, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, content(30, 777), body)
	require.Less(t, time.Since(start), 5*time.Second)
	require.EqualValues(t, 1, b.calls.Load())
	require.EqualValues(t, 1, flushedStats(n.s).ForwardFailures)
}

// TestForgedForward: a read marked forwarded that no node of the cluster
// signed is refused with 403 AccessDenied before anything is built or
// forwarded; a signed one is served where it was sent.
func TestForgedForward(t *testing.T) {
	pool, _ := pgtest.Pool(t)
	members := []cluster.Member{
		{ID: "a", AdvertiseURL: "http://127.0.0.1:1", Roles: []string{cluster.RoleServer}},
		{ID: "b", AdvertiseURL: "http://127.0.0.1:1", Roles: []string{cluster.RoleServer}},
	}
	b := newFakeBuilder()
	n := startNode(t, "a", pool, b, func() []cluster.Member { return members }, nil)
	keyB := ownedBy(t, members, "b", 0)
	keyB2 := ownedBy(t, members, "b", 1000)
	b.add(keyB, content(31, 500))
	b.add(keyB2, content(32, 500))
	url, url2 := n.ts.URL+"/mink/"+keyB, n.ts.URL+"/mink/"+keyB2

	stale := forwarded(t, http.MethodGet, url, "b", "a")
	old := time.Now().Add(-90 * time.Second).Unix() // within the old ±5 min, past ±60 s
	m := hmac.New(sha256.New, forwardKey)
	m.Write(auth.ForwardMessage(http.MethodGet, "/mink/"+keyB, "b", "a", old))
	stale[auth.ForwardTimeHeader] = strconv.FormatInt(old, 10)
	stale[auth.ForwardSignatureHeader] = hex.EncodeToString(m.Sum(nil))
	otherCluster := forwarded(t, http.MethodGet, url, "b", "a")
	{
		req, err := http.NewRequest(http.MethodGet, url, nil)
		require.NoError(t, err)
		auth.SignForward(auth.DeriveKey([]byte("another cluster"), auth.PurposeForward), req, "b", "a")
		otherCluster[auth.ForwardSignatureHeader] = req.Header.Get(auth.ForwardSignatureHeader)
		otherCluster[auth.ForwardTimeHeader] = req.Header.Get(auth.ForwardTimeHeader)
	}
	badSig := forwarded(t, http.MethodGet, url, "b", "a")
	badSig[auth.ForwardSignatureHeader] = strings.Repeat("0", 64)
	for name, c := range map[string]struct {
		url string
		hdr map[string]string
	}{
		"no signature":            {url, map[string]string{objects.ForwardedHeader: "b"}},
		"bad signature":           {url, badSig},
		"other cluster's key":     {url, otherCluster},
		"replayed on another key": {url2, forwarded(t, http.MethodGet, url, "b", "a")},
		"replayed as HEAD":        {url, forwarded(t, http.MethodGet, url, "b", "a")},
		// A read another node forwarded to the owner b, captured and
		// replayed to a (which would build a file it does not own).
		"replayed to another node": {url, forwarded(t, http.MethodGet, url, "x", "b")},
		"stale":                    {url, stale},
		"metadata file":            {n.ts.URL + "/mink/a/t/metadata/00000.metadata.json", map[string]string{objects.ForwardedHeader: "b"}},
	} {
		t.Run(name, func(t *testing.T) {
			method := http.MethodGet
			if name == "replayed as HEAD" {
				method = http.MethodHead
			}
			resp, body := do(t, method, c.url, c.hdr)
			require.Equal(t, http.StatusForbidden, resp.StatusCode, "%s", body)
			if method == http.MethodGet {
				require.Equal(t, "AccessDenied", parseS3Error(t, body).Code)
			}
		})
	}
	require.Zero(t, b.calls.Load(), "nothing was built for a forged forward")
	st := flushedStats(n.s)
	require.Zero(t, st.Forwards, "nothing was forwarded for a forged forward")

	// Signed by a node of the cluster: a serves it itself, though b owns it.
	resp, body := do(t, http.MethodGet, url, forwarded(t, http.MethodGet, url, "b", "a"))
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	require.Equal(t, content(31, 500), body)
	require.EqualValues(t, 1, b.calls.Load())
	require.Zero(t, flushedStats(n.s).Forwards)

	// A node with no forward key neither forwards nor accepts forwards.
	alone := startNode(t, "a", pool, b, func() []cluster.Member { return members }, func(c *objects.Config) { c.ForwardKey = nil })
	resp, _ = do(t, http.MethodGet, alone.ts.URL+"/mink/"+keyB, forwarded(t, http.MethodGet, alone.ts.URL+"/mink/"+keyB, "b", "a"))
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	resp, body = do(t, http.MethodGet, alone.ts.URL+"/mink/"+keyB2, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, content(32, 500), body)
	require.Zero(t, flushedStats(alone.s).Forwards+flushedStats(alone.s).ForwardFailures, "built here, not forwarded")
}

// TestForwardTLS: an owner that advertises https is forwarded to over TLS,
// verified with PeerTLS; without the cluster's CA the owner's certificate
// is not trusted and the read is built locally.
func TestForwardTLS(t *testing.T) {
	pool, _ := pgtest.Pool(t)
	hb := &lateHandler{}
	tsB := httptest.NewTLSServer(hb)
	defer tsB.Close()
	members := []cluster.Member{
		{ID: "a", AdvertiseURL: "https://127.0.0.1:1", Roles: []string{cluster.RoleServer}},
		{ID: "b", AdvertiseURL: tsB.URL, Roles: []string{cluster.RoleServer}},
	}
	view := func() []cluster.Member { return members }
	roots := x509.NewCertPool()
	roots.AddCert(tsB.Certificate())
	ba, bb := newFakeBuilder(), newFakeBuilder()
	sb := startNode(t, "b", pool, bb, view, nil)
	var h http.Handler = sb.s
	hb.h.Store(&h)
	a := startNode(t, "a", pool, ba, view, func(c *objects.Config) { c.PeerTLS = &tls.Config{RootCAs: roots} })
	untrusting := startNode(t, "a", pool, ba, view, nil)

	keyB := ownedBy(t, members, "b", 0)
	data := content(33, 3000)
	ba.add(keyB, data)
	bb.add(keyB, data)
	resp, body := do(t, http.MethodGet, a.ts.URL+"/mink/"+keyB, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	require.Equal(t, data, body)
	require.EqualValues(t, 1, bb.calls.Load(), "the owner built it")
	require.Zero(t, ba.calls.Load())
	require.EqualValues(t, 1, flushedStats(a.s).Forwards)
	require.Zero(t, flushedStats(a.s).ForwardFailures)

	resp, body = do(t, http.MethodGet, untrusting.ts.URL+"/mink/"+keyB, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	require.Equal(t, data, body)
	require.EqualValues(t, 1, flushedStats(untrusting.s).ForwardFailures, "the owner's certificate is not trusted")
	require.EqualValues(t, 1, ba.calls.Load(), "built here instead")
}

// TestForwardRefusedSignature: the address members give for the owner b
// now answers as node c (restarted under another id), which refuses a
// forward signed for b; a builds the read itself.
func TestForwardRefusedSignature(t *testing.T) {
	pool, _ := pgtest.Pool(t)
	bc := newFakeBuilder()
	c := startNode(t, "c", pool, bc, nil, nil)
	members := []cluster.Member{
		{ID: "a", AdvertiseURL: "http://unused", Roles: []string{cluster.RoleServer}},
		{ID: "b", AdvertiseURL: c.ts.URL, Roles: []string{cluster.RoleServer}},
	}
	ba := newFakeBuilder()
	a := startNode(t, "a", pool, ba, func() []cluster.Member { return members }, nil)
	keyB := ownedBy(t, members, "b", 0)
	ba.add(keyB, content(41, 300))
	bc.add(keyB, content(41, 300))

	resp, body := do(t, http.MethodGet, a.ts.URL+"/mink/"+keyB, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	require.Equal(t, content(41, 300), body)
	require.EqualValues(t, 1, ba.calls.Load(), "built on a")
	require.Zero(t, bc.calls.Load(), "c refused a forward signed for b")
	st := flushedStats(a.s)
	require.EqualValues(t, 1, st.Forwards)
	require.EqualValues(t, 1, st.ForwardFailures)
}

// A read signed with the cluster's forward key by a node id that is not a
// live member (one that left, or never joined) is refused with 403
// AccessDenied and builds nothing; one from a node that joined after the
// receiver's view (in PostgreSQL only) is served.
func TestForwardFromNonMember(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.Pool(t)
	members := []cluster.Member{{ID: "a", AdvertiseURL: "http://127.0.0.1:1", Roles: []string{cluster.RoleServer}}}
	b := newFakeBuilder()
	n := startNode(t, "a", pool, b, func() []cluster.Member { return members }, nil)
	key := dataKey(0, 0)
	b.add(key, content(71, 300))
	url := n.ts.URL + "/mink/" + key

	_, err := pool.Exec(context.Background(), `INSERT INTO nodes (id, instance, advertise_url, roles, expires_at)
		VALUES ('gone', 'test', 'http://127.0.0.1:1', '{server}', now() - interval '1 second')`)
	require.NoError(t, err)
	for _, from := range []string{"gone", "never-joined"} {
		resp, body := do(t, http.MethodGet, url, forwarded(t, http.MethodGet, url, from, "a"))
		require.Equal(t, http.StatusForbidden, resp.StatusCode, "%s", body)
		require.Equal(t, "AccessDenied", parseS3Error(t, body).Code)
	}
	require.Zero(t, b.calls.Load(), "nothing was built for a non-member's forward")

	registerNode(t, pool, "joined")
	resp, body := do(t, http.MethodGet, url, forwarded(t, http.MethodGet, url, "joined", "a"))
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	require.Equal(t, content(71, 300), body)
}
