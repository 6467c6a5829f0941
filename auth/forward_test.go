package auth_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minkhq/mink/auth"
)

// A signed request crosses a real HTTP connection and verifies on the
// other side; every change to what the signature covers, another key, a
// missing header or a time outside the window is refused.
func TestForwardSignature(t *testing.T) {
	key := auth.DeriveKey([]byte("secret of cluster one"), auth.PurposeForward)
	type seen struct {
		node string
		err  error
	}
	got := make(chan seen, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		node, err := auth.VerifyForward(key, r, "node-r")
		got <- seen{node, err}
	}))
	defer srv.Close()
	send := func(t *testing.T, req *http.Request) seen {
		t.Helper()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return <-got
	}
	// An escaped path and a query: what the receiver parses must be what
	// the sender signed.
	const target = "/mink/a%20b/t/data/0/0-10-1.parquet?x=1&y=%2F"
	signed := func(t *testing.T, method, node string) *http.Request {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+target, nil)
		if err != nil {
			t.Fatal(err)
		}
		auth.SignForward(key, req, node, "node-r")
		return req
	}

	if s := send(t, signed(t, http.MethodGet, "node-a")); s.err != nil || s.node != "node-a" {
		t.Fatalf("signed GET: node %q, err %v", s.node, s.err)
	}
	if s := send(t, signed(t, http.MethodHead, "node-b")); s.err != nil || s.node != "node-b" {
		t.Fatalf("signed HEAD: node %q, err %v", s.node, s.err)
	}

	otherKey := auth.DeriveKey([]byte("secret of cluster two"), auth.PurposeForward)
	macAt := func(k []byte, method, uri, node string, unix int64) string {
		m := hmac.New(sha256.New, k)
		m.Write(auth.ForwardMessage(method, uri, node, "node-r", unix))
		return hex.EncodeToString(m.Sum(nil))
	}
	now := time.Now().Unix()
	for name, tamper := range map[string]func(r *http.Request){
		"no signature": func(r *http.Request) {
			r.Header = http.Header{auth.ForwardedHeader: {"node-a"}}
		},
		"no time": func(r *http.Request) { r.Header.Del(auth.ForwardTimeHeader) },
		"signature not hex": func(r *http.Request) {
			r.Header.Set(auth.ForwardSignatureHeader, strings.Repeat("zz", 32))
		},
		"signature truncated": func(r *http.Request) {
			r.Header.Set(auth.ForwardSignatureHeader, r.Header.Get(auth.ForwardSignatureHeader)[:62])
		},
		"bit flipped": func(r *http.Request) {
			s := []byte(r.Header.Get(auth.ForwardSignatureHeader))
			s[10] ^= 1
			r.Header.Set(auth.ForwardSignatureHeader, string(s))
		},
		"other node named": func(r *http.Request) { r.Header.Set(auth.ForwardedHeader, "node-z") },
		// Signed by a node of the cluster for another node, replayed here.
		"replayed to another node": func(r *http.Request) { auth.SignForward(key, r, "node-a", "node-x") },
		"time changed":             func(r *http.Request) { r.Header.Set(auth.ForwardTimeHeader, strconv.FormatInt(now+1, 10)) },
		"path replayed": func(r *http.Request) {
			r.URL.Path, r.URL.RawPath = "/mink/a b/t2/data/0/0-10-1.parquet", ""
		},
		"query changed":  func(r *http.Request) { r.URL.RawQuery = "x=2&y=%2F" },
		"method changed": func(r *http.Request) { r.Method = http.MethodHead },
		"other cluster's key": func(r *http.Request) {
			r.Header.Set(auth.ForwardSignatureHeader, macAt(otherKey, r.Method, r.URL.RequestURI(), "node-a", now))
			r.Header.Set(auth.ForwardTimeHeader, strconv.FormatInt(now, 10))
		},
		// Signed correctly with the right key, but outside the window
		// (±60 s: 90 s was within the old ±5 min).
		"stale": func(r *http.Request) {
			old := now - 90
			r.Header.Set(auth.ForwardSignatureHeader, macAt(key, r.Method, r.URL.RequestURI(), "node-a", old))
			r.Header.Set(auth.ForwardTimeHeader, strconv.FormatInt(old, 10))
		},
		"future": func(r *http.Request) {
			later := now + 90
			r.Header.Set(auth.ForwardSignatureHeader, macAt(key, r.Method, r.URL.RequestURI(), "node-a", later))
			r.Header.Set(auth.ForwardTimeHeader, strconv.FormatInt(later, 10))
		},
	} {
		t.Run(name, func(t *testing.T) {
			req := signed(t, http.MethodGet, "node-a")
			tamper(req)
			s := send(t, req)
			if !errors.Is(s.err, auth.ErrForward) || s.node != "" {
				t.Fatalf("verified as node %q, err %v", s.node, s.err)
			}
		})
	}

	// The message format is the documented one: a MAC computed from it
	// verifies (within the window).
	require(t, auth.ForwardWindow == 60*time.Second, "window %v", auth.ForwardWindow)
	req, _ := http.NewRequest(http.MethodGet, srv.URL+target, nil)
	req.Header.Set(auth.ForwardedHeader, "node-c")
	req.Header.Set(auth.ForwardTimeHeader, strconv.FormatInt(now-30, 10))
	req.Header.Set(auth.ForwardSignatureHeader, hex.EncodeToString(hmacOf(key,
		"mink-forward\nGET\n"+target+"\nnode-c\nnode-r\n"+strconv.FormatInt(now-30, 10))))
	if s := send(t, req); s.err != nil || s.node != "node-c" {
		t.Fatalf("documented format: node %q, err %v", s.node, s.err)
	}

	// No header at all, or no key on the receiver: not forwarded.
	plain := httptest.NewRequest(http.MethodGet, target, nil)
	if _, err := auth.VerifyForward(key, plain, "node-r"); !errors.Is(err, auth.ErrForward) {
		t.Fatalf("unmarked request: %v", err)
	}
	r := httptest.NewRequest(http.MethodGet, target, nil)
	auth.SignForward(nil, r, "node-a", "node-r")
	if _, err := auth.VerifyForward(nil, r, "node-r"); !errors.Is(err, auth.ErrForward) {
		t.Fatalf("empty key: %v", err)
	}
}

// BenchmarkVerifyForward: the receiver's cost of checking a forwarded
// request (once per forwarded read).
func BenchmarkVerifyForward(b *testing.B) {
	key := auth.DeriveKey([]byte("bench"), auth.PurposeForward)
	r := httptest.NewRequest(http.MethodGet, "/mink/ns/t/data/3/1000-2000-1.parquet", nil)
	auth.SignForward(key, r, "node-a", "node-b")
	for b.Loop() {
		if _, err := auth.VerifyForward(key, r, "node-b"); err != nil {
			b.Fatal(err)
		}
	}
}

func hmacOf(key []byte, msg string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(msg))
	return m.Sum(nil)
}

func require(t *testing.T, ok bool, format string, args ...any) {
	t.Helper()
	if !ok {
		t.Fatalf(format, args...)
	}
}
