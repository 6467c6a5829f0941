package catalog_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/minkhq/mink/auth"
	"github.com/minkhq/mink/catalog"
	"github.com/minkhq/mink/internal/pgtest"
)

// fuzzTables are the tables FuzzRequest's catalog holds: namespace (levels
// joined by ".") and name.
var fuzzTables = [][2]string{{"a", "t1"}, {"a", "t1~dlq"}, {"a.b", "t2"}, {"c-1", "T_3"}}

// FuzzRequest sends requests of any method, path and query (as a client
// writes them on the wire) and an If-None-Match to a catalog over a real
// PostgreSQL holding fuzzTables, and checks that:
//   - nothing fails on the server's side (no 5xx: Postgres is up);
//   - every error is the spec's ErrorModel (IcebergErrorResponse: error
//     with message, type and code equal to the status), as JSON;
//   - a table load that succeeds is of the table the path names, read with
//     the spec's rules (namespace levels joined by %1F; "." too), and a
//     listing names only what is stored.
func FuzzRequest(f *testing.F) {
	for _, s := range []string{
		"/v1/config", "/v1/config?warehouse=other", "/v1/namespaces", "/v1/namespaces?parent=a", "/v1/namespaces?parent=a%1Fb",
		"/v1/namespaces?pageToken=&pageSize=1", "/v1/namespaces/a", "/v1/namespaces/a%1Fb", "/v1/namespaces/a.b/tables",
		"/v1/namespaces/a/tables?pageToken=dDE&pageSize=1", "/v1/namespaces/a/tables/t1", "/v1/namespaces/a/tables/t1~dlq",
		"/v1/namespaces/a%1Fb/tables/t2?snapshots=refs", "/v1/namespaces/a%1fb/tables/t2", "/v1/namespaces/c-1/tables/T_3",
		"/v1/namespaces/a/tables/t2", "/v1/namespaces/a%2Fb/tables/t2", "/v1/namespaces/%ff/tables/t1", "/v1/namespaces/a/views",
		"/v1/namespaces/a/views/v", "/v1/namespaces/a/tables/t1/metrics", "/v1/tables/rename", "/v1/namespaces/../config",
		"/v1/namespaces//tables/t1", "/v1/namespaces/a/tables/t1?snapshots=x", "/v1/namespaces?pageSize=0&pageToken=",
		"/v1/oauth/tokens", "/v1/namespaces/a/tables/t1/credentials", "/v1/prefix/namespaces/a/tables/t1",
	} {
		f.Add(uint8(0), s, "")
	}
	f.Add(uint8(1), "/v1/namespaces/a/tables/t1", "")
	f.Add(uint8(2), "/v1/namespaces/a/tables/t1", "")
	f.Add(uint8(3), "/v1/namespaces/a", "")
	f.Add(uint8(0), "/v1/namespaces/a/tables/t1", `"x", W/"y"`)
	f.Add(uint8(0), "/v1/namespaces/a/tables/t1", `*`)

	pool, _ := pgtest.Pool(f)
	stored := map[string]string{} // "ns.name" → metadata location
	for _, t := range fuzzTables {
		loc := "s3://mink/" + strings.ReplaceAll(t[0], ".", "/") + "/" + t[1]
		meta := loc + "/metadata/00000-" + uuid.NewString() + ".metadata.json"
		var id int64
		if err := pool.QueryRow(context.Background(), `
			INSERT INTO tables (namespace, name, topic, value_format, schema_json, table_uuid, location, metadata_location)
			VALUES ($1, $2, $2, 'string', '{}', gen_random_uuid(), $3, $4) RETURNING id`, t[0], t[1], loc, meta).Scan(&id); err != nil {
			f.Fatal(err)
		}
		if _, err := pool.Exec(context.Background(), `INSERT INTO metadata_files (path, table_id, content) VALUES ($1, $2, $3)`,
			strings.TrimPrefix(meta, "s3://mink/"), id, `{"format-version":2,"location":"`+loc+`"}`); err != nil {
			f.Fatal(err)
		}
		stored[t[0]+"."+t[1]] = meta
	}
	h, err := catalog.New(catalog.Config{AdvertiseURL: advertise}, pool)
	if err != nil {
		f.Fatal(err)
	}
	methods := []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodDelete, http.MethodPut, "OPTIONS"}

	f.Fuzz(func(t *testing.T, m uint8, target, inm string) {
		method := methods[int(m)%len(methods)]
		raw := method + " " + target + " HTTP/1.1\r\nHost: mink\r\n"
		if inm != "" {
			raw += "If-None-Match: " + inm + "\r\n"
		}
		req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw + "\r\n")))
		if err != nil || req.Header.Get("If-None-Match") != inm || req.URL.Host != "" || !strings.HasPrefix(req.URL.Path, "/v1/") {
			return // the server refuses it before any handler; the node mounts the catalog at /v1/
		}
		// The admin sees every table: visibility rules are tested with
		// their principals.
		req = req.WithContext(auth.WithPrincipal(context.Background(), &auth.Principal{Name: "fuzz", Admin: true}))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		resp := w.Result()
		body := w.Body.Bytes()
		switch {
		case resp.StatusCode >= 500:
			t.Fatalf("%s %q: %d %s", method, target, resp.StatusCode, body)
		case resp.StatusCode >= 300 && resp.StatusCode < 400 && resp.StatusCode != http.StatusNotModified:
			return // ServeMux's redirect to the cleaned path
		case resp.StatusCode >= 400:
			if method == http.MethodHead {
				return // no body, by status alone (errors.go)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Fatalf("%s %q: %d with Content-Type %q", method, target, resp.StatusCode, ct)
			}
			var e struct {
				Error *struct {
					Message *string `json:"message"`
					Type    string  `json:"type"`
					Code    int     `json:"code"`
				} `json:"error"`
			}
			if err := json.Unmarshal(body, &e); err != nil || e.Error == nil || e.Error.Message == nil || *e.Error.Message == "" ||
				e.Error.Type == "" || e.Error.Code != resp.StatusCode {
				t.Fatalf("%s %q: %d without an ErrorModel: %s", method, target, resp.StatusCode, body)
			}
			return
		}
		if method != http.MethodGet || resp.StatusCode != http.StatusOK {
			return
		}
		seg := strings.Split(strings.TrimPrefix(req.URL.EscapedPath(), "/v1/"), "/")
		switch {
		case len(seg) == 4 && seg[0] == "namespaces" && seg[2] == "tables":
			ns, name := unescape(t, seg[1]), unescape(t, seg[3])
			full := strings.ReplaceAll(ns, "\x1f", ".") + "." + name
			var lt struct {
				MetadataLocation string `json:"metadata-location"`
			}
			if err := json.Unmarshal(body, &lt); err != nil || stored[full] == "" || lt.MetadataLocation != stored[full] {
				t.Fatalf("GET %q loads %q (%v), the path names %q (stored at %q)", target, lt.MetadataLocation, err, full, stored[full])
			}
		case len(seg) == 3 && seg[0] == "namespaces" && seg[2] == "tables":
			ns := strings.ReplaceAll(unescape(t, seg[1]), "\x1f", ".")
			var lt struct {
				Identifiers []struct {
					Namespace []string `json:"namespace"`
					Name      string   `json:"name"`
				} `json:"identifiers"`
			}
			if err := json.Unmarshal(body, &lt); err != nil {
				t.Fatal(err)
			}
			for _, id := range lt.Identifiers {
				full := strings.Join(id.Namespace, ".") + "." + id.Name
				if strings.Join(id.Namespace, ".") != ns || stored[full] == "" {
					t.Fatalf("GET %q lists %q", target, full)
				}
			}
		case len(seg) == 1 && seg[0] == "namespaces":
			var ln struct {
				Namespaces [][]string `json:"namespaces"`
			}
			if err := json.Unmarshal(body, &ln); err != nil {
				t.Fatal(err)
			}
			for _, n := range ln.Namespaces {
				if !slices.ContainsFunc(fuzzTables, func(t [2]string) bool { return strings.HasPrefix(t[0]+".", strings.Join(n, ".")+".") }) {
					t.Fatalf("GET %q lists namespace %q", target, n)
				}
			}
		}
	})
}

func unescape(t *testing.T, s string) string {
	u, err := url.PathUnescape(s)
	if err != nil {
		t.Fatalf("a path that reached a handler does not unescape: %q", s)
	}
	return u
}
