package auth_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/minkhq/mink/auth"
	"github.com/minkhq/mink/internal/pgtest"
)

func TestTokens(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	tk := &auth.Tokens{Key: auth.DeriveKey([]byte("secret"), auth.PurposePrincipalToken), TTL: 90 * time.Second,
		Now: func() time.Time { return now }}
	tok, exp := tk.Issue("alice")
	if exp != 90 || !strings.HasPrefix(tok, "mink1.") {
		t.Fatalf("Issue: %q, %d", tok, exp)
	}
	if name, err := tk.Verify(tok); name != "alice" || err != nil {
		t.Fatalf("Verify: %q, %v", name, err)
	}
	other := &auth.Tokens{Key: auth.DeriveKey([]byte("other"), auth.PurposePrincipalToken), TTL: time.Hour, Now: tk.Now}
	forged, _ := other.Issue("alice")
	i := strings.LastIndexByte(tok, '.')
	flip := []byte(tok)
	flip[10] ^= 1 // a byte of the claims
	for name, bad := range map[string]string{
		"other cluster's key": forged,
		"claims changed":      string(flip),
		"signature dropped":   tok[:i],
		"signature swapped":   tok[:i] + forged[strings.LastIndexByte(forged, '.'):],
		"not a token":         "hello",
		"empty":               "",
	} {
		if _, err := tk.Verify(bad); !errors.Is(err, auth.ErrTokenInvalid) {
			t.Errorf("%s: %v, want ErrTokenInvalid", name, err)
		}
	}
	now = now.Add(89 * time.Second)
	if _, err := tk.Verify(tok); err != nil {
		t.Fatalf("1 s before expiry: %v", err)
	}
	now = now.Add(time.Second)
	if _, err := tk.Verify(tok); !errors.Is(err, auth.ErrTokenExpired) {
		t.Fatalf("at expiry: %v, want ErrTokenExpired", err)
	}
}

// tokenServer serves POST /v1/oauth/tokens and a route that needs a
// bearer token, with principal "reader" (grant a.t1) stored.
func tokenServer(t *testing.T, cfg auth.Config) (srv *httptest.Server, a *auth.Authenticator, id, secret string) {
	pool, _ := pgtest.Pool(t)
	ctx := context.Background()
	key, err := auth.ClusterSecret(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	a = auth.NewAuthenticator(cfg, auth.NewStore(pool), key)
	if id, secret, err = a.Store().Create(ctx, "reader", []string{"a.t1"}, false); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/oauth/tokens", a.ServeToken)
	mux.HandleFunc("GET /who", func(w http.ResponseWriter, r *http.Request) {
		p, err := a.Bearer(r.Context(), r)
		if err != nil {
			w.Header().Set("WWW-Authenticate", auth.Challenge(err))
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte(p.Name + " " + strings.Join(p.Grants, ",")))
	})
	srv = httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, a, id, secret
}

type tokenAnswer struct {
	status int
	header http.Header
	body   map[string]any
}

func postToken(t *testing.T, url string, form url.Values, basic [2]string) tokenAnswer {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url+"/v1/oauth/tokens", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if basic[0] != "" {
		req.SetBasicAuth(basic[0], basic[1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("token answer: %v", err)
	}
	return tokenAnswer{resp.StatusCode, resp.Header, body}
}

func getWho(t *testing.T, url, token string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url+"/who", nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b)), resp.Header.Get("WWW-Authenticate")
}

// The client-credentials grant of the Iceberg REST spec: in the body or
// as HTTP Basic; every refusal with its OAuthError.
func TestServeToken(t *testing.T) {
	srv, a, id, secret := tokenServer(t, auth.Config{})
	good := url.Values{"grant_type": {"client_credentials"}, "client_id": {id}, "client_secret": {secret}, "scope": {"catalog"}}
	ans := postToken(t, srv.URL, good, [2]string{})
	if ans.status != 200 || ans.body["token_type"] != "bearer" || ans.body["expires_in"] != 3600.0 || ans.body["scope"] != "catalog" ||
		ans.body["issued_token_type"] != "urn:ietf:params:oauth:token-type:access_token" || ans.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("token: %+v", ans)
	}
	tok := ans.body["access_token"].(string)
	if code, body, _ := getWho(t, srv.URL, tok); code != 200 || body != "reader a.t1" {
		t.Fatalf("with the token: %d %q", code, body)
	}
	basic := postToken(t, srv.URL, url.Values{"grant_type": {"client_credentials"}}, [2]string{id, secret})
	if basic.status != 200 || basic.body["access_token"] == "" {
		t.Fatalf("basic: %+v", basic)
	}

	for name, c := range map[string]struct {
		form   url.Values
		basic  [2]string
		status int
		code   string
	}{
		"wrong secret":   {url.Values{"grant_type": {"client_credentials"}, "client_id": {id}, "client_secret": {secret + "x"}}, [2]string{}, 401, "invalid_client"},
		"unknown client": {url.Values{"grant_type": {"client_credentials"}, "client_id": {"x"}, "client_secret": {secret}}, [2]string{}, 401, "invalid_client"},
		"no credentials": {url.Values{"grant_type": {"client_credentials"}}, [2]string{}, 401, "invalid_client"},
		"basic wrong":    {url.Values{"grant_type": {"client_credentials"}}, [2]string{id, "nope"}, 401, "invalid_client"},
		"both ways":      {good, [2]string{id, secret}, 400, "invalid_request"},
		"no grant type":  {url.Values{"client_id": {id}, "client_secret": {secret}}, [2]string{}, 400, "invalid_request"},
		"token exchange": {url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"}, "subject_token": {tok}}, [2]string{}, 400, "unsupported_grant_type"},
		"password grant": {url.Values{"grant_type": {"password"}, "username": {"u"}, "password": {"p"}}, [2]string{}, 400, "unsupported_grant_type"},
	} {
		ans := postToken(t, srv.URL, c.form, c.basic)
		if ans.status != c.status || ans.body["error"] != c.code || ans.body["error_description"] == "" {
			t.Errorf("%s: %d %+v, want %d %s", name, ans.status, ans.body, c.status, c.code)
		}
	}

	// Bearer refusals, each a 401 with its challenge (RFC 6750 §3).
	if code, _, ch := getWho(t, srv.URL, ""); code != 401 || ch != `Bearer realm="mink"` {
		t.Fatalf("no token: %d %q", code, ch)
	}
	if code, _, ch := getWho(t, srv.URL, tok+"x"); code != 401 || !strings.Contains(ch, `error="invalid_token"`) {
		t.Fatalf("tampered token: %d %q", code, ch)
	}
	if _, err := a.Store().Revoke(context.Background(), "reader"); err != nil {
		t.Fatal(err)
	}
	if code, body, _ := getWho(t, srv.URL, tok); code != 401 || !strings.Contains(body, "revoked") {
		t.Fatalf("revoked principal's token: %d %q", code, body)
	}
	if ans := postToken(t, srv.URL, good, [2]string{}); ans.status != 401 || ans.body["error"] != "invalid_client" {
		t.Fatalf("revoked principal's token request: %+v", ans)
	}
}

// A token outlives token_ttl by nothing.
func TestTokenExpires(t *testing.T) {
	srv, _, id, secret := tokenServer(t, auth.Config{TokenTTL: time.Second})
	ts := &auth.TokenSource{URL: srv.URL, Credential: id + ":" + secret}
	tok, err := ts.Token(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if code, _, _ := getWho(t, srv.URL, tok); code != 200 {
		t.Fatalf("fresh token: %d", code)
	}
	time.Sleep(2 * time.Second)
	if code, body, ch := getWho(t, srv.URL, tok); code != 401 || !strings.Contains(body, "expired") || !strings.Contains(ch, "invalid_token") {
		t.Fatalf("expired token: %d %q %q", code, body, ch)
	}
	bad := &auth.TokenSource{URL: srv.URL, Credential: id + ":wrong"}
	if _, err := bad.Token(context.Background()); err == nil || !strings.Contains(err.Error(), "invalid_client") {
		t.Fatalf("wrong secret: %v", err)
	}
}
