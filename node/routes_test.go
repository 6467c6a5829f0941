package node_test

import (
	"bufio"
	"context"
	"encoding/xml"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/minkhq/mink/auth"
	"github.com/minkhq/mink/cluster"
	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/node"
)

func TestMain(m *testing.M) { testkit.MainPostgres(m) }

// startNode starts a server-only node with pprof on, under mode, against
// a fresh schema and an in-process Kafka.
func startNode(t *testing.T, mode auth.Mode) *node.Node {
	t.Helper()
	return startNodeWith(t, mode, "")
}

// startNodeWith is startNode with /metrics behind metricsToken.
func startNodeWith(t *testing.T, mode auth.Mode, metricsToken string) *node.Node {
	t.Helper()
	kc, err := kfake.NewCluster(kfake.NumBrokers(1))
	require.NoError(t, err)
	t.Cleanup(kc.Close)
	n, err := node.Start(context.Background(), node.Config{
		PostgresURL: pgtest.Schema(t), KafkaBrokers: kc.ListenAddrs(), Listen: "127.0.0.1:0", NodeID: "routes-1",
		Roles: []string{cluster.RoleServer}, CacheDir: t.TempDir(), Auth: mode, Pprof: true, MetricsToken: metricsToken,
		Logger: slog.New(slog.DiscardHandler),
	})
	require.NoError(t, err)
	t.Cleanup(n.Stop)
	return n
}

// waitReady waits until n's /readyz answers 200: node.Start returns before
// the node's first membership round writes its row, which the console lists.
func waitReady(t *testing.T, n *node.Node) {
	t.Helper()
	require.Eventually(t, func() bool {
		resp, err := http.Get(n.URL() + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 30*time.Second, 20*time.Millisecond, "node never ready")
}

// rawGet sends "GET <target> HTTP/1.1" over a fresh TCP connection, the
// target exactly as given (no client cleans it), and returns the status,
// Content-Type and body.
func rawGet(t *testing.T, base, target string) (int, string, []byte) {
	t.Helper()
	u, err := url.Parse(base)
	require.NoError(t, err)
	conn, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(10*time.Second)))
	_, err = io.WriteString(conn, "GET "+target+" HTTP/1.1\r\nHost: "+u.Host+"\r\nConnection: close\r\n\r\n")
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header.Get("Content-Type"), body
}

// s3Code is the Code of an S3 XML error body.
func s3Code(t *testing.T, body []byte) string {
	t.Helper()
	var e struct {
		Code string `xml:"Code"`
	}
	require.NoError(t, xml.Unmarshal(body, &e), "%s", body)
	return e.Code
}

// A path with "//", "." or ".." segments reaches the S3 API as sent and is
// answered with its XML error (NoSuchKey under auth none, AccessDenied
// under principals), not the ServeMux's 307 redirect; the node's other
// routes are still served.
func TestUncleanS3Paths(t *testing.T) {
	unclean := []string{
		"/mink/demo/t//data/0/0-10-1.parquet",
		"/mink/demo/t/./data/0/0-10-1.parquet",
		"/mink/demo/t/../t/data/0/0-10-1.parquet",
		"/mink/demo/../../etc/passwd",
		"/mink//demo/t/metadata/00000.metadata.json",
		// Keys PostgreSQL's text cannot hold: no such key, not a 500.
		"/mink/demo/t/metadata/a%00",
		"/mink/demo/t/metadata/%FF",
		"/mink/demo%00/t/metadata/00000.metadata.json",
	}
	for mode, want := range map[auth.Mode]struct {
		status int
		code   string
	}{
		auth.ModeNone:       {http.StatusNotFound, "NoSuchKey"},
		auth.ModePrincipals: {http.StatusForbidden, "AccessDenied"},
	} {
		t.Run(string(mode), func(t *testing.T) {
			n := startNode(t, mode)
			for _, p := range unclean {
				status, ctype, body := rawGet(t, n.URL(), p)
				require.Equal(t, want.status, status, "%s: %s", p, body)
				require.Equal(t, "application/xml", ctype, p)
				require.Equal(t, want.code, s3Code(t, body), p)
			}
			status, _, body := rawGet(t, n.URL(), "/healthz")
			require.Equal(t, http.StatusOK, status)
			require.Equal(t, "ok\n", string(body))
			status, _, _ = rawGet(t, n.URL(), "/metrics")
			require.Equal(t, http.StatusOK, status)
		})
	}
}

// Under auth principals /debug/pprof/ needs an admin principal's bearer
// token (its cmdline shows the flags): 401 without one, 403 for a
// non-admin's, 200 for an admin's; under auth none it is open.
func TestPprofNeedsAdmin(t *testing.T) {
	ctx := context.Background()
	n := startNode(t, auth.ModePrincipals)
	store := n.Auth().Store()
	get := func(token string) (int, []byte) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, n.URL()+"/debug/pprof/cmdline", nil)
		require.NoError(t, err)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, body
	}
	token := func(admin bool, name string) string {
		t.Helper()
		id, secret, err := store.Create(ctx, name, nil, admin)
		require.NoError(t, err)
		tok, err := (&auth.TokenSource{URL: n.URL(), Credential: id + ":" + secret}).Token(ctx)
		require.NoError(t, err)
		return tok
	}

	status, body := get("")
	require.Equal(t, http.StatusUnauthorized, status, "%s", body)
	status, body = get("not-a-token")
	require.Equal(t, http.StatusUnauthorized, status, "%s", body)
	status, body = get(token(false, "reader"))
	require.Equal(t, http.StatusForbidden, status, "%s", body)
	status, body = get(token(true, "ops"))
	require.Equal(t, http.StatusOK, status, "%s", body)
	require.Contains(t, string(body), "node.test", "the test binary's command line")

	open := startNode(t, auth.ModeNone)
	resp, err := http.Get(open.URL() + "/debug/pprof/cmdline")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

// Every node serves the console at /ui (not the S3 API): under auth
// principals 401 with the Basic challenge, so that a browser prompts, and
// the page with an admin's client id and secret; under auth none it is
// open.
func TestConsoleRoute(t *testing.T) {
	ctx := context.Background()
	n := startNode(t, auth.ModePrincipals)
	for _, p := range []string{"/ui", "/ui/", "/ui/tables/a.b"} {
		status, ctype, body := rawGet(t, n.URL(), p)
		require.Equal(t, http.StatusUnauthorized, status, "%s: %s", p, body)
		require.Equal(t, "text/html; charset=utf-8", ctype, p)
	}
	id, secret, err := n.Auth().Store().Create(ctx, "ops", nil, true)
	require.NoError(t, err)
	waitReady(t, n)
	req, err := http.NewRequest(http.MethodGet, n.URL()+"/ui", nil)
	require.NoError(t, err)
	req.SetBasicAuth(id, secret)
	resp, body := testkit.Send(t, req)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	require.Contains(t, string(body), `<tr data-node="routes-1">`)

	open := startNode(t, auth.ModeNone)
	waitReady(t, open)
	resp, body = testkit.Get(t, open.URL()+"/ui")
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	require.Contains(t, string(body), `<tr data-node="routes-1">`)
}

// With a metrics token, /metrics (whose labels name every table) answers
// 401 with a Bearer challenge to a request without it, or with another;
// the probes stay open.
func TestMetricsToken(t *testing.T) {
	n := startNodeWith(t, auth.ModeNone, "scrape-secret")
	get := func(authz string) (*http.Response, string) {
		req, err := http.NewRequest(http.MethodGet, n.URL()+"/metrics", nil)
		require.NoError(t, err)
		if authz != "" {
			req.Header.Set("Authorization", authz)
		}
		resp, body := testkit.Send(t, req)
		return resp, string(body)
	}
	for _, authz := range []string{"", "Bearer wrong", "Basic c2NyYXBlLXNlY3JldA=="} {
		resp, _ := get(authz)
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, authz)
		require.Equal(t, `Bearer realm="mink-metrics"`, resp.Header.Get("WWW-Authenticate"))
	}
	resp, body := get("Bearer scrape-secret")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, body, "go_goroutines")
	for _, p := range []string{"/healthz", "/readyz"} {
		status, _, _ := rawGet(t, n.URL(), p)
		require.NotEqual(t, http.StatusUnauthorized, status, p)
	}
}
