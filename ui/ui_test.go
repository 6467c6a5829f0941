package ui_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/admin"
	"github.com/minkhq/mink/auth"
	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/tables"
	"github.com/minkhq/mink/ui"
)

func TestMain(m *testing.M) { testkit.MainPostgres(m) }

// fixed is a Source answering one overview, whatever the table.
type fixed struct{ o *admin.Overview }

func (f fixed) Overview(_ context.Context, table string) (*admin.Overview, error) {
	if table == "" {
		return f.o, nil
	}
	for _, t := range f.o.Tables {
		if t.Table == table {
			return &admin.Overview{Time: f.o.Time, Nodes: f.o.Nodes, Tables: []*admin.TableStatus{t}}, nil
		}
	}
	return nil, tables.ErrNotFound
}

// hostile names a node and a table with markup, as a user could.
const hostile = `x"><script>alert(1)</script><img src=x onerror=alert(2)>`

func overview() *admin.Overview {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	exp := now.Add(9 * time.Second)
	holder := hostile
	return &admin.Overview{Time: now,
		Nodes: []admin.NodeSummary{{ID: hostile, AdvertiseURL: "http://a", Roles: []string{"indexer"},
			StartedAt: now.Add(-time.Minute), ExpiresAt: exp, PartitionLeases: 1234,
			WriterOf: []admin.WriterOf{{Table: "ns." + hostile, Epoch: 7}}}},
		Tables: []*admin.TableStatus{{Table: "ns." + hostile, Topic: hostile,
			Partitions: []admin.PartitionStatus{{Partition: 0, Holder: &holder, LeaseExpiresAt: &exp, Epoch: 3,
				IndexedOffset: 1234567, CommittedOffset: 1234000, HighWatermark: 1300000, LastStable: 1300000, Lag: 65433}},
			UnknownFields: admin.UnknownFieldsStatus{Count: 1, Examples: []string{hostile}},
			Files:         admin.FilesStatus{Count: 3, Bytes: 3 << 20}, DeadLetters: 2}},
	}
}

// Names come from users: every one is escaped, in text and attributes,
// and in links as one path segment; numbers have thousands separators.
func TestEscapesNames(t *testing.T) {
	srv := httptest.NewServer(ui.New(fixed{overview()}, ui.Config{NodeID: hostile}))
	defer srv.Close()
	tablePage := "/ui/tables/" + url.PathEscape("ns."+hostile)
	for _, path := range []string{"/ui", tablePage} {
		resp, body := testkit.Get(t, srv.URL+path)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", path, body)
		page := string(body)
		require.NotContains(t, page, "<script>alert", path)
		require.NotContains(t, page, "<img src=x", path)
		require.Contains(t, page, "&lt;script&gt;alert(1)&lt;/script&gt;", path)
		require.Equal(t, 1, strings.Count(page, "<script"), "only the page's own script: %s", path)
	}
	resp, body := testkit.Get(t, srv.URL+"/ui")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(body), `href="/ui/tables/ns.x%22%3E%3Cscript%3Ealert%281%29%3C%2Fscript%3E%3Cimg%20src=x%20onerror=alert%282%29%3E"`)
	require.Contains(t, string(body), `<td class="num leases">1,234</td>`)
	resp, body = testkit.Get(t, srv.URL+tablePage)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(body), `<td class="num indexed">1,234,567</td>`)
	require.Contains(t, string(body), `<td class="num lag high">65,433</td>`)
}

// The console is read-only (405 for anything but GET and HEAD), sends its
// security headers on every answer, answers only <main>'s content with
// ?fragment=1, and 404 for a missing table or page.
func TestMethodsHeadersFragments(t *testing.T) {
	srv := httptest.NewServer(ui.New(fixed{overview()}, ui.Config{NodeID: "n1"}))
	defer srv.Close()
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
		req, err := http.NewRequest(m, srv.URL+"/ui", strings.NewReader("x"))
		require.NoError(t, err)
		resp, _ := testkit.Send(t, req)
		require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, m)
		require.Equal(t, "GET, HEAD", resp.Header.Get("Allow"), m)
	}
	req, err := http.NewRequest(http.MethodHead, srv.URL+"/ui", nil)
	require.NoError(t, err)
	resp, body := testkit.Send(t, req)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Empty(t, body)

	resp, body = testkit.Get(t, srv.URL+"/ui")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	csp := resp.Header.Get("Content-Security-Policy")
	require.Contains(t, csp, "default-src 'none'")
	require.Contains(t, csp, "script-src 'self'")
	require.Contains(t, csp, "frame-ancestors 'none'")
	require.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"))
	require.Equal(t, "no-store", resp.Header.Get("Cache-Control"))
	require.Contains(t, string(body), "<!doctype html>")
	require.Contains(t, string(body), `<script src="/ui/assets/console.js" defer></script>`)

	resp, body = testkit.Get(t, srv.URL+"/ui?fragment=1")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.NotContains(t, string(body), "<html")
	require.Contains(t, string(body), `<table id="nodes">`)

	for path, ctype := range map[string]string{"/ui/assets/console.js": "text/javascript", "/ui/assets/console.css": "text/css"} {
		resp, body := testkit.Get(t, srv.URL+path)
		require.Equal(t, http.StatusOK, resp.StatusCode, path)
		require.Contains(t, resp.Header.Get("Content-Type"), ctype, path)
		require.NotEmpty(t, body, path)
	}
	for _, path := range []string{"/ui/tables/ns.nope", "/ui/nothing", "/ui/assets/nope.js", "/ui/assets/"} {
		resp, _ := testkit.Get(t, srv.URL+path)
		require.Equal(t, http.StatusNotFound, resp.StatusCode, path)
	}
}

// Under auth principals a page needs an admin principal: HTTP Basic with
// its client id and secret, or its bearer token. Without credentials, or
// with wrong ones, 401 with the Basic challenge (a browser prompts); 403
// for a principal that is not an admin. The assets are open.
func TestNeedsAdmin(t *testing.T) {
	pool, _ := pgtest.Pool(t)
	ctx := context.Background()
	secret, err := auth.ClusterSecret(ctx, pool)
	require.NoError(t, err)
	a := auth.NewAuthenticator(auth.Config{}, auth.NewStore(pool), secret)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/oauth/tokens", a.ServeToken)
	console := ui.New(fixed{overview()}, ui.Config{NodeID: "n1", Auth: a})
	mux.Handle("/ui", console)
	mux.Handle("/ui/", console)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	credential := func(name string, isAdmin bool) (string, string) {
		id, sec, err := a.Store().Create(ctx, name, []string{"*"}, isAdmin)
		require.NoError(t, err)
		return id, sec
	}
	opsID, opsSecret := credential("ops", true)
	readerID, readerSecret := credential("reader", false)
	bearer := func(id, sec string) string {
		tok, err := (&auth.TokenSource{URL: srv.URL, Credential: id + ":" + sec}).Token(ctx)
		require.NoError(t, err)
		return "Bearer " + tok
	}
	get := func(path string, set func(*http.Request)) (*http.Response, string) {
		req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		require.NoError(t, err)
		if set != nil {
			set(req)
		}
		resp, body := testkit.Send(t, req)
		return resp, string(body)
	}
	basic := func(id, sec string) func(*http.Request) { return func(r *http.Request) { r.SetBasicAuth(id, sec) } }
	header := func(v string) func(*http.Request) { return func(r *http.Request) { r.Header.Set("Authorization", v) } }

	for name, set := range map[string]func(*http.Request){
		"none":         nil,
		"wrong secret": basic(opsID, "nope"),
		"unknown id":   basic("nobody", opsSecret),
		"bad token":    header("Bearer mink1.nope.nope"),
	} {
		for _, path := range []string{"/ui", "/ui/tables/ns.x", "/ui?fragment=1"} {
			resp, body := get(path, set)
			require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "%s %s", name, path)
			require.Equal(t, `Basic realm="mink", charset="UTF-8"`, resp.Header.Get("WWW-Authenticate"), name)
			require.Contains(t, body, "admin principal", name)
			require.NotContains(t, body, `<table id="nodes">`, name)
		}
	}
	for name, set := range map[string]func(*http.Request){
		"reader basic":  basic(readerID, readerSecret),
		"reader bearer": header(bearer(readerID, readerSecret)),
	} {
		resp, body := get("/ui", set)
		require.Equal(t, http.StatusForbidden, resp.StatusCode, name)
		require.Contains(t, body, "Principal reader is not an admin", name)
		require.NotContains(t, body, `<table id="nodes">`, name)
	}
	for name, set := range map[string]func(*http.Request){
		"ops basic":  basic(opsID, opsSecret),
		"ops bearer": header(bearer(opsID, opsSecret)),
	} {
		resp, body := get("/ui", set)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", name, body)
		require.Contains(t, body, `<table id="nodes">`, name)
	}
	resp, _ := get("/ui/assets/console.css", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)

	// A revoked admin is refused at once (within auth.CacheTTL for a token).
	_, err = a.Store().Revoke(ctx, "ops")
	require.NoError(t, err)
	resp, _ = get("/ui", basic(opsID, opsSecret))
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
}

// counting counts the overviews read.
type counting struct {
	fixed
	reads atomic.Int32
}

func (c *counting) Overview(ctx context.Context, table string) (*admin.Overview, error) {
	c.reads.Add(1)
	return c.fixed.Overview(ctx, table)
}

// Viewers of one page share a read for half the refresh period: the
// console's load on Postgres follows the pages open, not the viewers.
func TestViewersShareReads(t *testing.T) {
	src := &counting{fixed: fixed{overview()}}
	srv := httptest.NewServer(ui.New(src, ui.Config{NodeID: "n1", Refresh: time.Minute}))
	defer srv.Close()
	for range 3 {
		resp, _ := testkit.Get(t, srv.URL+"/ui?fragment=1")
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}
	require.EqualValues(t, 1, src.reads.Load())
	resp, _ := testkit.Get(t, srv.URL+"/ui/tables/"+url.PathEscape("ns."+hostile))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.EqualValues(t, 2, src.reads.Load(), "a table page reads its own")

	src = &counting{fixed: fixed{overview()}}
	srv2 := httptest.NewServer(ui.New(src, ui.Config{NodeID: "n1", Refresh: time.Millisecond}))
	defer srv2.Close()
	for range 3 {
		testkit.Get(t, srv2.URL+"/ui")
		time.Sleep(2 * time.Millisecond)
	}
	require.EqualValues(t, 3, src.reads.Load(), "each refresh period reads again")
}

// When Kafka could not be asked for a table's offsets (they come as 0),
// the console shows its log start, high watermark and lag as "–", not 0,
// and the cluster's lag says how many tables it does not count.
func TestUnknownOffsets(t *testing.T) {
	o := overview()
	o.Tables[0].Table, o.Tables[0].Topic = "ns.t", "t"
	o.Tables[0].KafkaError = "dial tcp: connection refused"
	p := &o.Tables[0].Partitions[0]
	p.LogStartOffset, p.HighWatermark, p.LastStable, p.Lag = 0, 0, 0, 0
	srv := httptest.NewServer(ui.New(fixed{o}, ui.Config{NodeID: "n1"}))
	defer srv.Close()

	resp, body := testkit.Get(t, srv.URL+"/ui")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	page := string(body)
	require.Contains(t, page, `<small class="bad">+ 1 table unknown</small>`)
	require.Contains(t, page, "<td class=\"num\">–</td>\n  <td class=\"num\">–</td>", "high watermark and lag of the table")

	resp, body = testkit.Get(t, srv.URL+"/ui/tables/ns.t")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	page = string(body)
	require.Contains(t, page, `<td class="num hw">–</td>`)
	require.Contains(t, page, "<td class=\"num\">–</td>\n  <td class=\"num indexed\">1,234,567</td>", "log start")
	require.Contains(t, page, `<span class="label">Lag</span><span class="value">–</span>`)
	require.NotContains(t, page, `<td class="num hw">0</td>`)
}

// The table page shows the history of the read model: the snapshots
// retained, how far back time travel reaches, and each ref besides main
// with its snapshot, time and records (escaped: a group's name comes from
// Kafka); a table without tags says so.
func TestTableHistory(t *testing.T) {
	o := overview()
	oldest := o.Time.Add(-90*time.Minute + 123*time.Millisecond)
	recs := int64(12345)
	o.Tables[0].History = admin.HistoryStatus{Snapshots: 2127, OldestAt: &oldest, Refs: []admin.RefStatus{
		{Name: "group.billing", Type: "tag", SnapshotID: 4127349186241153021, Timestamp: o.Time.Add(-4 * time.Second), Records: &recs},
		{Name: "group." + hostile, Type: "tag", SnapshotID: 9, Timestamp: oldest}}}
	plain := &admin.TableStatus{Table: "ns.plain", Topic: "plain", History: admin.HistoryStatus{Snapshots: 1, OldestAt: &oldest, Refs: []admin.RefStatus{}}}
	fresh := &admin.TableStatus{Table: "ns.fresh", Topic: "fresh"}
	o.Tables = append(o.Tables, plain, fresh)
	srv := httptest.NewServer(ui.New(fixed{o}, ui.Config{NodeID: "n1"}))
	defer srv.Close()

	resp, body := testkit.Get(t, srv.URL+"/ui/tables/"+url.PathEscape("ns."+hostile))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	page := string(body)
	require.Contains(t, page, `<p id="history">main's history: <span id="history-snapshots">2,127</span> snapshots retained; time travel (<code>mink scan --as-of</code>) reaches back to <code id="history-oldest">2026-12-01T08:30:00.123Z</code> <span class="dim">(1h 30m ago)</span>`)
	require.Contains(t, page, `<tr data-ref="group.billing">
  <td class="id">group.billing</td>
  <td>tag</td>
  <td class="num">4127349186241153021</td>
  <td><code>2026-12-01T09:59:56.000Z</code> <span class="dim">4s ago</span></td>
  <td class="num">12,345</td>`)
	require.Contains(t, page, `<td class="id">group.x&#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt;`)
	require.Contains(t, page, `<td class="num">–</td>`, "records unknown")
	require.NotContains(t, page, "<script>alert")

	_, body = testkit.Get(t, srv.URL+"/ui/tables/ns.plain?fragment=1")
	require.Contains(t, string(body), `<span id="history-snapshots">1</span> snapshot retained;`)
	require.Contains(t, string(body), `main only: no tags (mink.group-tags)`)
	_, body = testkit.Get(t, srv.URL+"/ui/tables/ns.fresh")
	require.Contains(t, string(body), `<p id="history">main's history: <span class="dim">none yet</span></p>`)
}

// A tag before main's first snapshot: the page says main has none and
// lists the tag; the copy-paste command quotes a ' for the shell (close
// the quote, an escaped quote, reopen) and the page escapes it for HTML.
func TestTableHistoryTagOnly(t *testing.T) {
	o := overview()
	recs := int64(5)
	o.Tables[0].Table = "t.trial"
	o.Tables[0].History = admin.HistoryStatus{Refs: []admin.RefStatus{
		{Name: "group.etl-it's", Type: "tag", SnapshotID: 42, Timestamp: o.Time.Add(-4 * time.Second), Records: &recs}}}
	srv := httptest.NewServer(ui.New(fixed{o}, ui.Config{NodeID: "n1"}))
	defer srv.Close()
	resp, body := testkit.Get(t, srv.URL+"/ui/tables/t.trial")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	page := string(body)
	require.Contains(t, page, `<p id="history">main's history: <span class="dim">none yet</span></p>`)
	require.Contains(t, page, `<tr data-ref="group.etl-it&#39;s">`)
	require.Contains(t, page, `<td><code>mink scan &#39;t.trial&#39; --ref &#39;group.etl-it&#39;\&#39;&#39;s&#39;</code></td>`)
	require.Contains(t, page, `<td><code>mink scan &#39;t.trial~dlq&#39;</code></td>`)
	require.NotContains(t, page, "main only: no tags")
}
