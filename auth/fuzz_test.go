package auth_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/minkhq/mink/auth"
)

// fuzzNow is the time FuzzVerify verifies at, so that its seeds (signed
// then, with credentials valid until 2126) stay valid.
var fuzzNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// FuzzVerify sends random requests (method, path and query, Authorization,
// X-Amz-Date, X-Amz-Content-Sha256, X-Amz-Security-Token, Range) to the
// verifier: it never panics; under a key that signed nothing nothing
// verifies; under the seeds' key a request that verifies carries the
// seeds' principal and prefixes (a token cannot be altered into another).
func FuzzVerify(f *testing.F) {
	c, err := auth.Vend(testKey, "alice", []string{"a/t1/"}, time.Date(2126, 1, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		f.Fatal(err)
	}
	creds := aws.Credentials{AccessKeyID: c.AccessKeyID, SecretAccessKey: c.SecretAccessKey, SessionToken: c.SessionToken}
	r := httptest.NewRequest(http.MethodGet, "/mink/a/t1/data/0/0-100-1.parquet", nil)
	r.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
	r.Header.Set("Range", "bytes=-8")
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, r, "UNSIGNED-PAYLOAD", "s3", testRegion, fuzzNow,
		func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true }); err != nil {
		f.Fatal(err)
	}
	seeds := [][7]string{{r.Method, r.URL.RequestURI(), r.Header.Get("Authorization"), r.Header.Get("X-Amz-Date"),
		r.Header.Get("X-Amz-Content-Sha256"), r.Header.Get("X-Amz-Security-Token"), r.Header.Get("Range")}}
	p := httptest.NewRequest(http.MethodGet, "/mink/a/t1/metadata/00001.metadata.json?X-Amz-Expires=3600", nil)
	u, _, err := v4.NewSigner().PresignHTTP(context.Background(), creds, p, "UNSIGNED-PAYLOAD", "s3", testRegion, fuzzNow,
		func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
	if err != nil {
		f.Fatal(err)
	}
	seeds = append(seeds, [7]string{http.MethodGet, strings.TrimPrefix(u, "http://example.com")})
	good := &auth.Verifier{Key: testKey, Region: testRegion}
	for _, s := range seeds {
		// The seeds verify, so the fuzzer starts from requests that reach
		// the signature check.
		if _, err := good.Verify(fuzzRequest(s[0], s[1], s[2], s[3], s[4], s[5], s[6]), fuzzNow); err != nil {
			f.Fatalf("seed %q: %v", s[1], err)
		}
		f.Add(s[0], s[1], s[2], s[3], s[4], s[5], s[6])
	}
	f.Add(http.MethodHead, "/mink/a/t1/x?X-Amz-Algorithm=AWS4-HMAC-SHA256", "AWS4-HMAC-SHA256 Credential=,,", "20260102T030405Z", "", "x", "")

	other := &auth.Verifier{Key: auth.DeriveKey([]byte("a key nobody signed with"), auth.PurposeCredentials), Region: testRegion}
	f.Fuzz(func(t *testing.T, method, target, authz, date, sha, token, rng string) {
		r := fuzzRequest(method, target, authz, date, sha, token, rng)
		if r == nil {
			return
		}
		if got, err := other.Verify(r, fuzzNow); err == nil {
			t.Fatalf("verified without the key: %+v", got)
		}
		got, err := good.Verify(r, fuzzNow)
		if err == nil && (got.Principal != "alice" || !slices.Equal(got.Prefixes, []string{"a/t1/"})) {
			t.Fatalf("verified altered credentials: %+v", got)
		}
	})
}

// fuzzRequest is a request to example.com of target (path and query), or
// nil when target is not one.
func fuzzRequest(method, target, authz, date, sha, token, rng string) *http.Request {
	if !strings.HasPrefix(target, "/") {
		return nil
	}
	r, err := http.NewRequest(http.MethodGet, "http://example.com"+target, nil)
	if err != nil {
		return nil
	}
	r.Method, r.RequestURI = method, target
	for k, v := range map[string]string{"Authorization": authz, "X-Amz-Date": date, "X-Amz-Content-Sha256": sha,
		"X-Amz-Security-Token": token, "Range": rng} {
		if v != "" {
			r.Header.Set(k, v)
		}
	}
	return r
}
