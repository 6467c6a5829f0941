package catalog_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/auth"
	"github.com/minkhq/mink/catalog"
	"github.com/minkhq/mink/internal/pgtest"
)

// authFixture is a catalog in auth principals mode, with tables a.t1 (and
// its dead-letter table), a.t2, b.x.t3 and c.t4.
type authFixture struct {
	*fixture
	auth *auth.Authenticator
}

func newAuthFixture(t *testing.T) *authFixture {
	t.Helper()
	pool, _ := pgtest.Pool(t)
	secret, err := auth.ClusterSecret(context.Background(), pool)
	require.NoError(t, err)
	a := auth.NewAuthenticator(auth.Config{}, auth.NewStore(pool), secret)
	f := &authFixture{fixture: &fixture{t: t, pool: pool, url: serve(t, catalog.Config{Auth: a}, pool)}, auth: a}
	for _, tb := range [][2]string{{"a", "t1"}, {"a", "t1~dlq"}, {"a", "t2"}, {"b.x", "t3"}, {"c", "t4"}} {
		f.addTable(tb[0], tb[1])
	}
	return f
}

// token creates principal name with grants (admin when admin) and returns
// a bearer token of it, got from the catalog's tokens endpoint.
func (f *authFixture) token(name string, admin bool, grants ...string) string {
	f.t.Helper()
	id, secret, err := f.auth.Store().Create(context.Background(), name, grants, admin)
	require.NoError(f.t, err)
	tok, err := (&auth.TokenSource{URL: f.url, Credential: id + ":" + secret}).Token(context.Background())
	require.NoError(f.t, err)
	return tok
}

func (f *authFixture) as(tok, method, path string) (*http.Response, []byte) {
	f.t.Helper()
	return f.do(method, path, "Authorization", "Bearer "+tok)
}

// Every route but the tokens endpoint needs a bearer token: 401 with the
// spec's ErrorModel and a challenge.
func TestAuthRequired(t *testing.T) {
	f := newAuthFixture(t)
	for _, path := range []string{"/v1/config", "/v1/namespaces", "/v1/namespaces/a/tables", "/v1/namespaces/a/tables/t1",
		"/v1/namespaces/a/tables/t1/credentials", "/v1/nope"} {
		rsp, body := f.do("GET", path)
		requireError(t, rsp, body, http.StatusUnauthorized, "NotAuthorizedException")
		require.Equal(t, `Bearer realm="mink"`, rsp.Header.Get("WWW-Authenticate"), path)
		rsp, body = f.do("GET", path, "Authorization", "Bearer mink1.forged.x")
		requireError(t, rsp, body, http.StatusUnauthorized, "NotAuthorizedException")
		require.Contains(t, rsp.Header.Get("WWW-Authenticate"), `error="invalid_token"`, path)
	}
	rsp, _ := f.do("HEAD", "/v1/namespaces/a/tables/t1")
	require.Equal(t, http.StatusUnauthorized, rsp.StatusCode)

	// The tokens endpoint takes POST only: 405, Allow: POST, the spec's
	// OAuthError (not a 404: the route exists).
	for _, method := range []string{"GET", "PUT", "DELETE"} {
		rsp, body := f.do(method, "/v1/oauth/tokens")
		require.Equal(t, http.StatusMethodNotAllowed, rsp.StatusCode, "%s: %s", method, body)
		require.Equal(t, "POST", rsp.Header.Get("Allow"))
		require.Equal(t, "no-store", rsp.Header.Get("Cache-Control"))
		oe := decode[map[string]string](t, body)
		require.Equal(t, "invalid_request", oe["error"], "%s", body)
		require.Contains(t, oe["error_description"], "takes POST", "%s", body)
	}
	rsp, _ = f.do("HEAD", "/v1/oauth/tokens")
	require.Equal(t, http.StatusMethodNotAllowed, rsp.StatusCode)
	require.Equal(t, "POST", rsp.Header.Get("Allow"))

	tok := f.token("reader", false, "a.t1")
	rsp, body := f.as(tok, "GET", "/v1/config")
	require.Equal(t, http.StatusOK, rsp.StatusCode)
	cfg := decode[struct {
		Defaults  map[string]string `json:"defaults"`
		Endpoints []string          `json:"endpoints"`
	}](t, body)
	require.Contains(t, cfg.Endpoints, "POST /v1/oauth/tokens")
	require.Contains(t, cfg.Endpoints, "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials")
	require.NotContains(t, cfg.Defaults, "s3.access-key-id")

	// A revoked principal's token is refused within the store's cache.
	_, err := f.auth.Store().Revoke(context.Background(), "reader")
	require.NoError(t, err)
	time.Sleep(auth.CacheTTL)
	rsp, body = f.as(tok, "GET", "/v1/namespaces")
	requireError(t, rsp, body, http.StatusUnauthorized, "NotAuthorizedException")
	require.Contains(t, string(body), "revoked")
}

func namespaces(t *testing.T, body []byte) []string {
	t.Helper()
	var out []string
	for _, ns := range decode[struct {
		Namespaces [][]string `json:"namespaces"`
	}](t, body).Namespaces {
		out = append(out, strings.Join(ns, "."))
	}
	return out
}

func tableNames(t *testing.T, body []byte) []string {
	t.Helper()
	var out []string
	for _, id := range decode[struct {
		Identifiers []struct {
			Name string `json:"name"`
		} `json:"identifiers"`
	}](t, body).Identifiers {
		out = append(out, id.Name)
	}
	return out
}

// A table without a grant does not exist for the principal: absent from
// lists, and every read of it answers exactly as for a missing table.
func TestVisibility(t *testing.T) {
	f := newAuthFixture(t)
	reader := f.token("reader", false, "a.t1")
	admin := f.token("ops", true)
	deep := f.token("deep", false, "b.*")

	list := func(tok, path string) []byte {
		rsp, body := f.as(tok, "GET", path)
		require.Equal(t, http.StatusOK, rsp.StatusCode, "%s: %s", path, body)
		return body
	}
	require.Equal(t, []string{"a"}, namespaces(t, list(reader, "/v1/namespaces")))
	require.Equal(t, []string{"t1"}, tableNames(t, list(reader, "/v1/namespaces/a/tables")))
	require.Equal(t, []string{"a", "b", "c"}, namespaces(t, list(admin, "/v1/namespaces")))
	require.Equal(t, []string{"t1", "t1~dlq", "t2"}, tableNames(t, list(admin, "/v1/namespaces/a/tables")))
	require.Equal(t, []string{"b"}, namespaces(t, list(deep, "/v1/namespaces")))
	require.Equal(t, []string{"b.x"}, namespaces(t, list(deep, "/v1/namespaces?parent=b")))
	require.Equal(t, []string{"t3"}, tableNames(t, list(deep, "/v1/namespaces/b%1Fx/tables")))
	require.Empty(t, tableNames(t, list(deep, "/v1/namespaces/b/tables")))

	rsp, _ := f.as(reader, "HEAD", "/v1/namespaces/a/tables/t1")
	require.Equal(t, http.StatusNoContent, rsp.StatusCode)
	rsp, body := f.as(reader, "GET", "/v1/namespaces/a/tables/t1")
	require.Equal(t, http.StatusOK, rsp.StatusCode, "%s", body)
	rsp, body = f.as(admin, "GET", "/v1/namespaces/a/tables/t2")
	require.Equal(t, http.StatusOK, rsp.StatusCode, "%s", body)

	// a.t2 exists, a.zz does not: the reader gets the same answers.
	for _, name := range []string{"t2", "t1~dlq", "zz"} {
		path := "/v1/namespaces/a/tables/" + name
		rsp, body := f.as(reader, "GET", path)
		e := requireError(t, rsp, body, http.StatusNotFound, "NoSuchTableException")
		require.Equal(t, "Table does not exist: a."+name, e.Message)
		rsp, _ = f.as(reader, "HEAD", path)
		require.Equal(t, http.StatusNotFound, rsp.StatusCode)
		rsp, body = f.as(reader, "GET", path+"/credentials")
		requireError(t, rsp, body, http.StatusNotFound, "NoSuchTableException")
	}
	for _, path := range []string{"/v1/namespaces/c", "/v1/namespaces/b", "/v1/namespaces/c/tables", "/v1/namespaces?parent=b",
		"/v1/namespaces/c/views"} {
		rsp, body := f.as(reader, "GET", path)
		requireError(t, rsp, body, http.StatusNotFound, "NoSuchNamespaceException")
	}
	rsp, _ = f.as(reader, "HEAD", "/v1/namespaces/c")
	require.Equal(t, http.StatusNotFound, rsp.StatusCode)
	rsp, _ = f.as(admin, "HEAD", "/v1/namespaces/c")
	require.Equal(t, http.StatusNoContent, rsp.StatusCode)
	rsp, _ = f.as(admin, "HEAD", "/v1/namespaces/a/tables/t2")
	require.Equal(t, http.StatusNoContent, rsp.StatusCode)
}

// Pages are cut after the grants filter: a principal pages through the
// tables it sees only.
func TestVisibilityPages(t *testing.T) {
	f := newAuthFixture(t)
	for _, n := range []string{"u1", "u2", "u3"} {
		f.addTable("a", n)
	}
	tok := f.token("some", false, "a.t1", "a.u2", "a.u3", "c.*")
	var got []string
	next := ""
	for range 10 {
		rsp, body := f.as(tok, "GET", "/v1/namespaces/a/tables?pageSize=2&pageToken="+next)
		require.Equal(t, http.StatusOK, rsp.StatusCode)
		got = append(got, tableNames(t, body)...)
		tok := decode[struct {
			Next *string `json:"next-page-token"`
		}](t, body).Next
		if tok == nil {
			break
		}
		next = *tok
	}
	require.Equal(t, []string{"t1", "u2", "u3"}, got)
	rsp, body := f.as(tok, "GET", "/v1/namespaces?pageSize=1&pageToken=")
	require.Equal(t, http.StatusOK, rsp.StatusCode)
	require.Equal(t, []string{"a"}, namespaces(t, body))
	require.Contains(t, string(body), "next-page-token")
}

// A table load vends credentials for the table (and its dead-letter table
// when granted) in config and storage-credentials; the credentials route
// refreshes them.
func TestVendedCredentials(t *testing.T) {
	f := newAuthFixture(t)
	one := f.token("one", false, "a.t1")
	all := f.token("all", false, "a.*")
	type loadResult struct {
		Config             map[string]string `json:"config"`
		StorageCredentials []struct {
			Prefix string            `json:"prefix"`
			Config map[string]string `json:"config"`
		} `json:"storage-credentials"`
	}
	for _, c := range []struct {
		tok      string
		prefixes []string
	}{
		{one, []string{"s3://mink/a/t1/"}},
		{all, []string{"s3://mink/a/t1/", "s3://mink/a/t1~dlq/"}},
	} {
		rsp, body := f.as(c.tok, "GET", "/v1/namespaces/a/tables/t1")
		require.Equal(t, http.StatusOK, rsp.StatusCode, "%s", body)
		res := decode[loadResult](t, body)
		for _, k := range []string{"s3.access-key-id", "s3.secret-access-key", "s3.session-token"} {
			require.NotEmpty(t, res.Config[k], k)
		}
		require.NotEqual(t, catalog.DefaultAccessKeyID, res.Config["s3.access-key-id"])
		ms, err := strconv.ParseInt(res.Config["s3.session-token-expires-at-ms"], 10, 64)
		require.NoError(t, err)
		require.WithinDuration(t, time.Now().Add(auth.DefaultCredentialsTTL), time.UnixMilli(ms), 2*time.Minute)
		require.Len(t, res.StorageCredentials, len(c.prefixes))
		for i, sc := range res.StorageCredentials {
			require.Equal(t, c.prefixes[i], sc.Prefix)
			require.Equal(t, res.Config["s3.access-key-id"], sc.Config["s3.access-key-id"])
			require.Equal(t, res.Config["s3.session-token"], sc.Config["s3.session-token"])
		}

		// The same credentials again within their minute: a revalidating
		// engine gets 304. (A load that crosses a minute boundary vends
		// others: try once more.)
		for attempt := 0; ; attempt++ {
			first, _ := f.as(c.tok, "GET", "/v1/namespaces/a/tables/t1")
			again, _ := f.do("GET", "/v1/namespaces/a/tables/t1", "Authorization", "Bearer "+c.tok,
				"If-None-Match", first.Header.Get("ETag"))
			if again.StatusCode == http.StatusNotModified || attempt == 1 {
				require.Equal(t, http.StatusNotModified, again.StatusCode)
				break
			}
		}

		rsp, body = f.as(c.tok, "GET", "/v1/namespaces/a/tables/t1/credentials")
		require.Equal(t, http.StatusOK, rsp.StatusCode, "%s", body)
		fresh := decode[loadResult](t, body)
		require.Len(t, fresh.StorageCredentials, len(c.prefixes))
		require.Equal(t, c.prefixes[0], fresh.StorageCredentials[0].Prefix)
		require.NotEmpty(t, fresh.StorageCredentials[0].Config["s3.secret-access-key"])
	}
}

// Vended credentials cover a table's location, not its name's path: a
// table created with a deleted one's name has location <name>-<uuid hex>
// (docs/design.md §4.1), and so may its dead-letter table. Covering
// a/t1/ would give the table's own principal 403s on every file and, to a
// principal granted a table named like the location's last part, the
// other table's files.
func TestVendedCredentialsCoverLocation(t *testing.T) {
	f := newAuthFixture(t)
	ctx := context.Background()
	for name, loc := range map[string]string{"t1": "s3://mink/a/t1-0123abcd", "t1~dlq": "s3://mink/a/t1~dlq-4567ef01"} {
		_, err := f.pool.Exec(ctx, `UPDATE tables SET location = $1 WHERE namespace = 'a' AND name = $2`, loc, name)
		require.NoError(t, err)
	}
	all := f.token("all", false, "a.*")
	for _, path := range []string{"/v1/namespaces/a/tables/t1", "/v1/namespaces/a/tables/t1/credentials"} {
		rsp, body := f.as(all, "GET", path)
		require.Equal(t, http.StatusOK, rsp.StatusCode, "%s", body)
		res := decode[struct {
			StorageCredentials []struct {
				Prefix string `json:"prefix"`
			} `json:"storage-credentials"`
		}](t, body)
		var prefixes []string
		for _, sc := range res.StorageCredentials {
			prefixes = append(prefixes, sc.Prefix)
		}
		require.Equal(t, []string{"s3://mink/a/t1-0123abcd/", "s3://mink/a/t1~dlq-4567ef01/"}, prefixes, path)
	}
	// The dead-letter table's own load covers its location only.
	rsp, body := f.as(all, "GET", "/v1/namespaces/a/tables/t1~dlq")
	require.Equal(t, http.StatusOK, rsp.StatusCode, "%s", body)
	require.Contains(t, string(body), `"prefix":"s3://mink/a/t1~dlq-4567ef01/"`)
	require.NotContains(t, string(body), `"prefix":"s3://mink/a/t1-0123abcd/"`)
}

// Under auth none nothing is vended: the credentials route answers an
// empty list, loads keep the static keys, and no token is asked for.
func TestNoAuthCredentials(t *testing.T) {
	f := newFixture(t, catalog.Config{})
	f.addTable("a", "t1")
	rsp, body := f.do("GET", "/v1/namespaces/a/tables/t1/credentials")
	require.Equal(t, http.StatusOK, rsp.StatusCode, "%s", body)
	require.JSONEq(t, `{"storage-credentials":[]}`, string(body))
	rsp, body = f.do("GET", "/v1/namespaces/a/tables/t1")
	require.Equal(t, http.StatusOK, rsp.StatusCode, "%s", body)
	res := decode[struct {
		Config             map[string]string `json:"config"`
		StorageCredentials []any             `json:"storage-credentials"`
	}](t, body)
	require.Equal(t, catalog.DefaultAccessKeyID, res.Config["s3.access-key-id"])
	require.Nil(t, res.StorageCredentials)
	rsp, body = f.do("GET", "/v1/namespaces/a/tables/zz/credentials")
	requireError(t, rsp, body, http.StatusNotFound, "NoSuchTableException")
	rsp, body = f.do("POST", "/v1/oauth/tokens")
	requireError(t, rsp, body, http.StatusNotFound, "NotFoundException")
}
