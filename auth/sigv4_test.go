package auth_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/minkhq/mink/auth"
)

const (
	testRegion  = "eu-west-3"
	emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	base        = "http://mink.example:8181/mink/"
)

var testKey = auth.DeriveKey([]byte("0123456789abcdef0123456789abcdef"), auth.PurposeCredentials)

func vend(t testing.TB, prefixes []string, exp time.Time) auth.Credentials {
	t.Helper()
	c, err := auth.Vend(testKey, "alice", prefixes, exp)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func awsCreds(c auth.Credentials) aws.Credentials {
	return aws.Credentials{AccessKeyID: c.AccessKeyID, SecretAccessKey: c.SecretAccessKey, SessionToken: c.SessionToken}
}

// signed returns a GET of key signed by aws-sdk-go-v2's signer at time at,
// as S3 clients sign: X-Amz-Content-Sha256 set and signed, the path not
// escaped twice.
func signed(t testing.TB, c aws.Credentials, method, key string, hdr map[string]string, region string, at time.Time) *http.Request {
	t.Helper()
	r, err := http.NewRequest(method, base+key, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	payload := r.Header.Get("X-Amz-Content-Sha256")
	if payload == "" {
		payload = "UNSIGNED-PAYLOAD"
		r.Header.Set("X-Amz-Content-Sha256", payload)
	}
	err = v4.NewSigner().SignHTTP(context.Background(), c, r, payload, "s3", region, at,
		func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// presigned returns a presigned GET URL of key made by aws-sdk-go-v2's
// signer, valid for expires from at.
func presigned(t testing.TB, c aws.Credentials, key string, expires time.Duration, at time.Time) string {
	t.Helper()
	r, err := http.NewRequest(http.MethodGet, base+key, nil)
	if err != nil {
		t.Fatal(err)
	}
	q := r.URL.Query()
	q.Set("X-Amz-Expires", strconv.FormatInt(int64(expires/time.Second), 10))
	r.URL.RawQuery = q.Encode()
	u, _, err := v4.NewSigner().PresignHTTP(context.Background(), c, r, "UNSIGNED-PAYLOAD", "s3", testRegion, at,
		func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func get(t testing.TB, u string) *http.Request {
	t.Helper()
	r, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// wantCode checks that err is an *auth.S3Error with code and status.
func wantCode(t *testing.T, name string, err error, status int, code string) {
	t.Helper()
	var e *auth.S3Error
	if !errors.As(err, &e) {
		t.Errorf("%s: error %v, want %s", name, err, code)
		return
	}
	if e.Code != code || e.Status != status {
		t.Errorf("%s: %d %s (%s), want %d %s", name, e.Status, e.Code, e.Message, status, code)
	}
}

func TestVend(t *testing.T) {
	exp := time.Now().Add(time.Hour)
	c := vend(t, []string{"analytics/events/", "analytics/events~dlq/"}, exp)
	if len(c.AccessKeyID) != 20 || !strings.HasPrefix(c.AccessKeyID, "MINK") || strings.ToUpper(c.AccessKeyID) != c.AccessKeyID {
		t.Errorf("access key id %q", c.AccessKeyID)
	}
	if len(c.SecretAccessKey) != 40 {
		t.Errorf("secret %q", c.SecretAccessKey)
	}
	if len(c.SessionToken) > 300 {
		t.Errorf("token of %d bytes", len(c.SessionToken))
	}
	if !c.Expiration.Equal(time.Unix(exp.Unix(), 0)) || c.Principal != "alice" {
		t.Errorf("expiration %v, principal %q", c.Expiration, c.Principal)
	}
	back, err := auth.ParseToken(testKey, c.SessionToken)
	if err != nil {
		t.Fatal(err)
	}
	if back.AccessKeyID != c.AccessKeyID || back.SecretAccessKey != c.SecretAccessKey || back.Principal != "alice" ||
		!back.Expiration.Equal(c.Expiration) || strings.Join(back.Prefixes, ",") != "analytics/events/,analytics/events~dlq/" {
		t.Errorf("parsed %+v, vended %+v", back, c)
	}
	other := vend(t, []string{"analytics/events/"}, exp)
	if other.AccessKeyID == c.AccessKeyID || other.SecretAccessKey == c.SecretAccessKey {
		t.Error("two grants gave the same keys")
	}
	// The same grant and expiry vend the same credentials (a table load's
	// ETag holds while they do); another expiry, others.
	if again := vend(t, []string{"analytics/events/", "analytics/events~dlq/"}, exp); again.AccessKeyID != c.AccessKeyID ||
		again.SecretAccessKey != c.SecretAccessKey || again.SessionToken != c.SessionToken {
		t.Errorf("vended again: %+v, first %+v", again, c)
	}
	if later := vend(t, []string{"analytics/events/", "analytics/events~dlq/"}, exp.Add(time.Minute)); later.AccessKeyID == c.AccessKeyID {
		t.Errorf("another expiry gave the same access key id %s", later.AccessKeyID)
	}
	if _, err := auth.ParseToken(auth.DeriveKey([]byte("another cluster"), auth.PurposeCredentials), c.SessionToken); !errors.Is(err, auth.ErrInvalidToken) {
		t.Errorf("another key's token: %v", err)
	}
	for _, bad := range [][]string{nil, {""}, {"a/t1"}, {"/a/t1/"}, {"a//t1/"}, {"a/../t1/"}, {"a/./"}} {
		if _, err := auth.Vend(testKey, "alice", bad, exp); err == nil {
			t.Errorf("Vend accepted prefixes %q", bad)
		}
	}
	long := make([]string, 32)
	for i := range long {
		long[i] = strings.Repeat("n", 250) + "/t" + strconv.Itoa(i) + "/"
	}
	if _, err := auth.Vend(testKey, "alice", long, exp); err == nil {
		t.Error("Vend made a token over the size ParseToken takes")
	}
	if _, err := auth.Vend(testKey, "", []string{"a/t1/"}, exp); err == nil {
		t.Error("Vend accepted no principal")
	}
	if _, err := auth.Vend(nil, "alice", []string{"a/t1/"}, exp); err == nil {
		t.Error("Vend accepted no key")
	}
}

// A table's prefix admits its own keys only: not its dead-letter table's
// (unless vended), not a table whose name it starts, no climbing out.
func TestAllowsKey(t *testing.T) {
	c := vend(t, []string{"a/t1/"}, time.Now().Add(time.Hour))
	dlq := vend(t, []string{"a/t1/", "a/t1~dlq/"}, time.Now().Add(time.Hour))
	nested := vend(t, []string{"a/t1/data/", "a/t1/metadata/"}, time.Now().Add(time.Hour))
	for _, key := range []string{"a/t1/data/0/0-100-1.parquet", "a/t1/metadata/00001.metadata.json"} {
		if nested.AllowsKey(key) {
			t.Errorf("credentials of tables a.t1.data and a.t1.metadata read a.t1's %s", key)
		}
	}
	if !nested.AllowsKey("a/t1/data/data/0/0-100-1.parquet") || !nested.AllowsKey("a/t1/metadata/metadata/00001.metadata.json") {
		t.Error("credentials of tables a.t1.data and a.t1.metadata do not read their own files")
	}
	for _, k := range []struct {
		key       string
		want, dlq bool
	}{
		{"a/t1/metadata/00001.metadata.json", true, true},
		{"a/t1/data/0/0-100-1.parquet", true, true},
		{"a/t1~dlq/data/0/0-1-1.parquet", false, true},
		{"a/t10/metadata/00001.metadata.json", false, false},
		{"a/t1", false, false},
		{"a/t2/metadata/x.avro", false, false},
		{"a/t1/../t2/metadata/x.avro", false, false},
		{"a/t1//metadata/x", false, false},
		{"a/t1/./metadata/x", false, false},
		{"", false, false},
		// Nested locations (the trial's case; tables refuses them too):
		// a table of namespace a.t1, and tables a.t1.data, a.t1.metadata,
		// whose files would lie below a/t1/; and a/t1's own files seen
		// from a grant on a.t1.data (a/t1/data/) or a.t1.metadata.
		{"a/t1/sub/metadata/00001.metadata.json", false, false},
		{"a/t1/sub/data/0/0-100-1.parquet", false, false},
		{"a/t1/data/data/0/0-100-1.parquet", false, false},
		{"a/t1/data/metadata/00001.metadata.json", false, false},
		{"a/t1/metadata/metadata/00001.metadata.json", false, false},
		{"a/t1/data/x/0-100-1.parquet", false, false},
		{"a/t1/data/0", false, false},
		{"a/t1/stats.puffin", false, false},
	} {
		if got := c.AllowsKey(k.key); got != k.want {
			t.Errorf("t1's AllowsKey(%q) = %v", k.key, got)
		}
		if got := dlq.AllowsKey(k.key); got != k.dlq {
			t.Errorf("t1 and dlq's AllowsKey(%q) = %v", k.key, got)
		}
	}
}

func TestVerify(t *testing.T) {
	now := time.Now()
	c := vend(t, []string{"a/t1/"}, now.Add(time.Hour))
	ac := awsCreds(c)
	key := "a/t1/data/0/0-100-1.parquet"
	active := map[string]bool{"alice": true}
	v := &auth.Verifier{Key: testKey, Region: testRegion, Active: func(_ context.Context, p string) (bool, error) {
		if p == "broken" {
			return false, errors.New("postgres is down")
		}
		return active[p], nil
	}}

	ok := func(name string, r *http.Request) {
		t.Helper()
		got, err := v.Verify(r, now)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			return
		}
		if got.Principal != "alice" || got.AccessKeyID != c.AccessKeyID || !got.AllowsKey(key) {
			t.Errorf("%s: credentials %+v", name, got)
		}
	}
	ok("GET", signed(t, ac, http.MethodGet, key, nil, testRegion, now))
	ok("GET with a Range and the empty payload hash", signed(t, ac, http.MethodGet, key,
		map[string]string{"Range": "bytes=-8", "X-Amz-Content-Sha256": emptySHA256}, testRegion, now))
	ok("HEAD", signed(t, ac, http.MethodHead, key, nil, testRegion, now))
	ok("signed 14 minutes ago", signed(t, ac, http.MethodGet, key, nil, testRegion, now.Add(-14*time.Minute)))
	ok("a dead-letter key", signed(t, ac, http.MethodGet, "a/t1~dlq/metadata/x y.json", nil, testRegion, now))
	r := signed(t, ac, http.MethodGet, key, nil, testRegion, now)
	r.Header.Set("User-Agent", "changed after signing") // not a signed header
	ok("an unsigned header changed", r)
	ok("presigned", get(t, presigned(t, ac, key, time.Hour, now.Add(-30*time.Minute))))

	type refusal struct {
		name   string
		r      *http.Request
		status int
		code   string
	}
	var cases []refusal
	add := func(name string, r *http.Request, status int, code string) {
		cases = append(cases, refusal{name, r, status, code})
	}
	add("unsigned", get(t, base+key), 403, auth.CodeAccessDenied)
	expired := vend(t, []string{"a/t1/"}, now.Add(-time.Second))
	add("expired token", signed(t, awsCreds(expired), http.MethodGet, key, nil, testRegion, now), 400, auth.CodeExpiredToken)

	tampered := ac
	tampered.SessionToken = flip(ac.SessionToken, 12)
	add("tampered token", signed(t, tampered, http.MethodGet, key, nil, testRegion, now), 400, auth.CodeInvalidToken)
	// A token whose prefixes are widened: its MAC no longer matches.
	add("token of another cluster", signed(t, awsCreds(vendWith(t, []byte("other"), "alice")), http.MethodGet, key, nil, testRegion, now), 400, auth.CodeInvalidToken)

	swapped := ac
	swapped.SessionToken = vend(t, []string{"a/t1/"}, now.Add(time.Hour+time.Minute)).SessionToken
	add("another credential's token", signed(t, swapped, http.MethodGet, key, nil, testRegion, now), 403, auth.CodeInvalidAccessKeyID)
	noToken := ac
	noToken.SessionToken = ""
	add("no token", signed(t, noToken, http.MethodGet, key, nil, testRegion, now), 403, auth.CodeInvalidAccessKeyID)

	wrongSecret := ac
	wrongSecret.SecretAccessKey = flip(ac.SecretAccessKey, 3)
	add("wrong secret", signed(t, wrongSecret, http.MethodGet, key, nil, testRegion, now), 403, auth.CodeSignatureDoesNotMatch)
	r = signed(t, ac, http.MethodGet, key, nil, testRegion, now)
	h := r.Header.Get("Authorization")
	r.Header.Set("Authorization", h[:len(h)-1]+string("0123456789abcdef"[(strings.IndexByte("0123456789abcdef", h[len(h)-1])+1)%16]))
	add("tampered signature", r, 403, auth.CodeSignatureDoesNotMatch)
	r = signed(t, ac, http.MethodGet, key, map[string]string{"Range": "bytes=0-9"}, testRegion, now)
	r.Header.Set("Range", "bytes=0-99")
	add("a signed header changed", r, 403, auth.CodeSignatureDoesNotMatch)
	r = signed(t, ac, http.MethodGet, key, nil, testRegion, now)
	r.URL.Path = "/mink/a/t1/data/0/0-200-1.parquet"
	add("another key under the signature", r, 403, auth.CodeSignatureDoesNotMatch)
	r = signed(t, ac, http.MethodGet, key, nil, testRegion, now)
	r.Method = http.MethodHead
	add("another method", r, 403, auth.CodeSignatureDoesNotMatch)

	add("wrong region", signed(t, ac, http.MethodGet, key, nil, "us-east-1", now), 400, auth.CodeAuthorizationHeaderMalformed)
	add("skewed clock (ahead)", signed(t, ac, http.MethodGet, key, nil, testRegion, now.Add(16*time.Minute)), 403, auth.CodeRequestTimeTooSkewed)
	add("skewed clock (behind)", signed(t, ac, http.MethodGet, key, nil, testRegion, now.Add(-16*time.Minute)), 403, auth.CodeRequestTimeTooSkewed)
	r = signed(t, ac, http.MethodGet, key, nil, testRegion, now)
	r.Header.Set("Authorization", "AWS "+c.AccessKeyID+":c2lnbmF0dXJl")
	add("signature version 2", r, 400, auth.CodeAuthorizationHeaderMalformed)
	add("a body hash", signed(t, ac, http.MethodGet, key, map[string]string{"X-Amz-Content-Sha256": strings.Repeat("ab", 32)}, testRegion, now),
		400, auth.CodeXAmzContentSHA256Mismatch)

	add("presigned, expired", get(t, presigned(t, ac, key, time.Hour, now.Add(-61*time.Minute))), 403, auth.CodeAccessDenied)
	add("presigned, not valid yet", get(t, presigned(t, ac, key, time.Hour, now.Add(20*time.Minute))), 403, auth.CodeAccessDenied)
	add("presigned, expires past 7 days", get(t, presigned(t, ac, key, 8*24*time.Hour, now)), 400, auth.CodeAuthorizationQueryParametersErr)
	u := presigned(t, ac, key, time.Hour, now)
	add("presigned, another key", get(t, strings.Replace(u, "0-100-1", "0-200-1", 1)), 403, auth.CodeSignatureDoesNotMatch)
	add("presigned, longer expiry", get(t, strings.Replace(u, "X-Amz-Expires=3600", "X-Amz-Expires=3601", 1)), 403, auth.CodeSignatureDoesNotMatch)
	pu, _ := url.Parse(u)
	q := pu.Query()
	q.Set("X-Amz-Signature", strings.Repeat("0", 64))
	pu.RawQuery = q.Encode()
	add("presigned, tampered signature", get(t, pu.String()), 403, auth.CodeSignatureDoesNotMatch)
	q = pu.Query()
	q.Set("X-Amz-Security-Token", flip(c.SessionToken, 20))
	pu.RawQuery = q.Encode()
	add("presigned, tampered token", get(t, pu.String()), 400, auth.CodeInvalidToken)
	r = get(t, u)
	r.Header.Set("Authorization", signed(t, ac, http.MethodGet, key, nil, testRegion, now).Header.Get("Authorization"))
	add("header and query", r, 400, auth.CodeInvalidArgument)

	// Every x-amz-* header sent must be signed, as S3 requires.
	r = signed(t, noToken, http.MethodGet, key, nil, testRegion, now)
	r.Header.Set("X-Amz-Security-Token", c.SessionToken)
	add("a session token not signed", r, 403, auth.CodeAccessDenied)
	r = signed(t, ac, http.MethodGet, key, nil, testRegion, now)
	r.Header.Set("X-Amz-Checksum-Mode", "ENABLED")
	add("another x-amz-* header not signed", r, 403, auth.CodeAccessDenied)
	r = get(t, u)
	r.Header.Set("x-amz-security-token", c.SessionToken)
	add("presigned, an x-amz-* header not signed", r, 403, auth.CodeAccessDenied)

	revoked := awsCreds(vendWith(t, testKey, "bob"))
	add("revoked principal", signed(t, revoked, http.MethodGet, key, nil, testRegion, now), 403, auth.CodeAccessDenied)
	add("revoked principal, presigned", get(t, presigned(t, revoked, key, time.Hour, now)), 403, auth.CodeAccessDenied)

	for _, c := range cases {
		_, err := v.Verify(c.r, now)
		wantCode(t, c.name, err, c.status, c.code)
	}

	broken := awsCreds(vendWith(t, testKey, "broken"))
	_, err := v.Verify(signed(t, broken, http.MethodGet, key, nil, testRegion, now), now)
	var e *auth.S3Error
	if err == nil || errors.As(err, &e) {
		t.Errorf("Active failing: %v, want its error", err)
	}
}

func vendWith(t testing.TB, key []byte, principal string) auth.Credentials {
	t.Helper()
	c, err := auth.Vend(key, principal, []string{"a/t1/"}, time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// flip changes the character at i to another of the same alphabet.
func flip(s string, i int) string {
	b := []byte(s)
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}

// BenchmarkVerify is the cost the S3 API adds to each request under auth
// principals (no Active hook).
func BenchmarkVerify(b *testing.B) {
	now := time.Now()
	c := vend(b, []string{"analytics/events/", "analytics/events~dlq/"}, now.Add(time.Hour))
	v := &auth.Verifier{Key: testKey, Region: testRegion}
	for _, mode := range []string{"header", "presigned"} {
		var r *http.Request
		if mode == "header" {
			r = signed(b, awsCreds(c), http.MethodGet, "analytics/events/data/3/1200-2400-1.parquet",
				map[string]string{"Range": "bytes=-65536"}, testRegion, now)
		} else {
			r = get(b, presigned(b, awsCreds(c), "analytics/events/data/3/1200-2400-1.parquet", time.Hour, now))
		}
		b.Run(mode, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := v.Verify(r, now); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
