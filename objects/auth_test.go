package objects_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/auth"
	"github.com/minkhq/mink/cluster"
	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/objects"
)

const authRegion = "eu-west-3"

var credentialsKey = auth.DeriveKey([]byte("objects test cluster secret"), auth.PurposeCredentials)

// principals is the Active hook of the tests: alice is active until
// revoked; "broken" cannot be checked.
type principals struct {
	mu      sync.Mutex
	revoked map[string]bool
}

func (p *principals) active(_ context.Context, name string) (bool, error) {
	if name == "broken" {
		return false, errors.New("postgres is down")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.revoked[name], nil
}

func (p *principals) revoke(name string, revoked bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.revoked[name] = revoked
}

func withAuth(p *principals) func(*objects.Config) {
	return func(cfg *objects.Config) {
		cfg.Auth, cfg.CredentialsKey, cfg.Region, cfg.Active = auth.ModePrincipals, credentialsKey, authRegion, p.active
	}
}

func vendFor(t testing.TB, principal string, ttl time.Duration, prefixes ...string) auth.Credentials {
	t.Helper()
	c, err := auth.Vend(credentialsKey, principal, prefixes, time.Now().Add(ttl))
	require.NoError(t, err)
	return c
}

// s3Client is aws-sdk-go-v2's S3 client with c, path style, at n, without
// retries (a refusal is final).
func s3Client(n *node, c auth.Credentials, region string) *s3.Client {
	return s3.New(s3.Options{
		Region:           region,
		BaseEndpoint:     aws.String(n.ts.URL),
		UsePathStyle:     true,
		RetryMaxAttempts: 1,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: c.AccessKeyID, SecretAccessKey: c.SecretAccessKey, SessionToken: c.SessionToken}, nil
		}),
	})
}

func getObject(ctx context.Context, cl *s3.Client, bucket, key string) ([]byte, error) {
	out, err := cl.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		return nil, err
	}
	defer out.Body.Close()
	return io.ReadAll(out.Body)
}

// requireCode checks that err is the S3 error code.
func requireCode(t *testing.T, err error, code string, msg string) {
	t.Helper()
	var ae smithy.APIError
	require.True(t, errors.As(err, &ae), "%s: %v", msg, err)
	require.Equal(t, code, ae.ErrorCode(), "%s: %v", msg, err)
}

// TestSignedReads: under auth principals, aws-sdk-go-v2's S3 client (and
// its presigned URLs, and iceberg-go's S3 FileIO) reads a table's files
// with credentials vended for it, and every other read gets its S3 error.
func TestSignedReads(t *testing.T) {
	ctx := context.Background()
	pool, _ := pgtest.Pool(t)
	b := newFakeBuilder()
	files := map[string][]byte{}
	for i, name := range []string{"t1", "t2", "t1~dlq", "t10"} {
		tid := insertTable(t, pool, "a", name)
		mk := "a/" + name + "/metadata/00001-x.metadata.json"
		files[mk] = []byte(`{"format-version":2,"table":"` + name + `"}`)
		insertMetadataFile(t, pool, tid, mk, files[mk])
		dk := "a/" + name + "/data/0/0-100-1.parquet"
		files[dk] = content(uint64(30+i), 50_000)
		b.add(dk, files[dk])
	}
	p := &principals{revoked: map[string]bool{}}
	n := startNode(t, "a", pool, b, nil, withAuth(p))
	t1meta, t1data := "a/t1/metadata/00001-x.metadata.json", "a/t1/data/0/0-100-1.parquet"

	c1 := vendFor(t, "alice", time.Hour, "a/t1/")
	cl := s3Client(n, c1, authRegion)

	t.Run("own table", func(t *testing.T) {
		for _, k := range []string{t1meta, t1data} {
			got, err := getObject(ctx, cl, "mink", k)
			require.NoError(t, err, k)
			require.Equal(t, files[k], got, k)
		}
		out, err := cl.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("mink"), Key: aws.String(t1data), Range: aws.String("bytes=-8")})
		require.NoError(t, err)
		tail, err := io.ReadAll(out.Body)
		out.Body.Close()
		require.NoError(t, err)
		require.Equal(t, files[t1data][len(files[t1data])-8:], tail)
		head, err := cl.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("mink"), Key: aws.String(t1data)})
		require.NoError(t, err)
		require.EqualValues(t, len(files[t1data]), *head.ContentLength)
		// A missing key of the table is still NoSuchKey: the credentials
		// cover it, and it does not exist.
		_, err = getObject(ctx, cl, "mink", "a/t1/metadata/missing.avro")
		requireCode(t, err, "NoSuchKey", "missing key")
	})

	t.Run("other keys", func(t *testing.T) {
		for _, k := range []string{"a/t2/metadata/00001-x.metadata.json", "a/t2/data/0/0-100-1.parquet",
			"a/t1~dlq/metadata/00001-x.metadata.json", "a/t10/data/0/0-100-1.parquet"} {
			_, err := getObject(ctx, cl, "mink", k)
			requireCode(t, err, "AccessDenied", k)
		}
		_, err := getObject(ctx, cl, "other", t1data)
		requireCode(t, err, "AccessDenied", "another bucket")
		_, err = cl.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("mink"), Prefix: aws.String("a/t1/")})
		requireCode(t, err, "AccessDenied", "a bucket-level request")
		// With the dead-letter table's prefix vended too, it reads both.
		both := s3Client(n, vendFor(t, "alice", time.Hour, "a/t1/", "a/t1~dlq/"), authRegion)
		for _, k := range []string{t1meta, "a/t1~dlq/metadata/00001-x.metadata.json"} {
			got, err := getObject(ctx, both, "mink", k)
			require.NoError(t, err, k)
			require.Equal(t, files[k], got, k)
		}
	})

	t.Run("refused credentials", func(t *testing.T) {
		_, err := getObject(ctx, s3Client(n, vendFor(t, "alice", -time.Second, "a/t1/"), authRegion), "mink", t1meta)
		requireCode(t, err, "ExpiredToken", "expired")
		_, err = getObject(ctx, s3Client(n, c1, "us-east-1"), "mink", t1meta)
		requireCode(t, err, "AuthorizationHeaderMalformed", "wrong region")
		wrong := c1
		wrong.SecretAccessKey = strings.Repeat("x", 40)
		_, err = getObject(ctx, s3Client(n, wrong, authRegion), "mink", t1meta)
		requireCode(t, err, "SignatureDoesNotMatch", "wrong secret")
		noToken := c1
		noToken.SessionToken = ""
		_, err = getObject(ctx, s3Client(n, noToken, authRegion), "mink", t1meta)
		requireCode(t, err, "InvalidAccessKeyId", "no session token")
		badToken := c1
		badToken.SessionToken = c1.SessionToken[:len(c1.SessionToken)-2] + "AA"
		_, err = getObject(ctx, s3Client(n, badToken, authRegion), "mink", t1meta)
		requireCode(t, err, "InvalidToken", "tampered token")

		p.revoke("alice", true)
		_, err = getObject(ctx, cl, "mink", t1meta)
		requireCode(t, err, "AccessDenied", "revoked")
		p.revoke("alice", false)
		_, err = getObject(ctx, cl, "mink", t1meta)
		require.NoError(t, err, "reinstated")

		_, err = getObject(ctx, s3Client(n, vendFor(t, "broken", time.Hour, "a/t1/"), authRegion), "mink", t1meta)
		requireCode(t, err, "SlowDown", "principal not checkable")
	})

	t.Run("raw requests", func(t *testing.T) {
		// Unsigned, and a forged forwarding mark: refused alike.
		for _, hdr := range []map[string]string{nil, {objects.ForwardedHeader: "b"}} {
			resp, body := do(t, http.MethodGet, n.ts.URL+"/mink/"+t1data, hdr)
			require.Equal(t, http.StatusForbidden, resp.StatusCode)
			require.Equal(t, "AccessDenied", parseS3Error(t, body).Code)
		}
		resp, _ := do(t, http.MethodHead, n.ts.URL+"/mink", nil)
		require.Equal(t, http.StatusForbidden, resp.StatusCode, "HeadBucket unsigned")

		r, err := http.NewRequest(http.MethodGet, n.ts.URL+"/mink/"+t1data, nil)
		require.NoError(t, err)
		r.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
		require.NoError(t, v4.NewSigner().SignHTTP(ctx, aws.Credentials{AccessKeyID: c1.AccessKeyID, SecretAccessKey: c1.SecretAccessKey,
			SessionToken: c1.SessionToken}, r, "UNSIGNED-PAYLOAD", "s3", authRegion, time.Now()))
		good := r.Header.Get("Authorization")
		resp, body := do(t, http.MethodGet, r.URL.String(), flat(r.Header))
		require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
		require.Equal(t, files[t1data], body)
		r.Header.Set("Authorization", good[:len(good)-4]+"0000")
		resp, body = do(t, http.MethodGet, r.URL.String(), flat(r.Header))
		require.Equal(t, http.StatusForbidden, resp.StatusCode)
		require.Equal(t, "SignatureDoesNotMatch", parseS3Error(t, body).Code)
		r.Header.Set("Authorization", good)
		r.Header.Set("X-Amz-Date", time.Now().Add(-20*time.Minute).UTC().Format("20060102T150405Z"))
		resp, body = do(t, http.MethodGet, r.URL.String(), flat(r.Header))
		require.Equal(t, http.StatusForbidden, resp.StatusCode)
		require.Equal(t, "RequestTimeTooSkewed", parseS3Error(t, body).Code)
	})

	t.Run("presigned", func(t *testing.T) {
		ps := s3.NewPresignClient(cl)
		req, err := ps.PresignGetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("mink"), Key: aws.String(t1data)},
			s3.WithPresignExpires(time.Minute))
		require.NoError(t, err)
		resp, err := http.Get(req.URL)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
		require.Equal(t, files[t1data], body)

		for name, u := range map[string]string{
			"tampered": strings.Replace(req.URL, "X-Amz-Expires=60", "X-Amz-Expires=600", 1),
			"moved":    strings.Replace(req.URL, "/a/t1/", "/a/t2/", 1),
		} {
			resp, err := http.Get(u)
			require.NoError(t, err)
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.NoError(t, err)
			require.Equal(t, http.StatusForbidden, resp.StatusCode, name)
			require.Equal(t, "SignatureDoesNotMatch", parseS3Error(t, body).Code, name)
		}
		other, err := ps.PresignGetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("mink"), Key: aws.String("a/t2/data/0/0-100-1.parquet")})
		require.NoError(t, err)
		resp, err = http.Get(other.URL)
		require.NoError(t, err)
		body, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusForbidden, resp.StatusCode)
		require.Equal(t, "AccessDenied", parseS3Error(t, body).Code, "another table's key, presigned")
	})

	t.Run("iceberg-go FileIO", func(t *testing.T) {
		fsys, err := icebergio.LoadFS(ctx, map[string]string{
			icebergio.S3EndpointURL: n.ts.URL, icebergio.S3Region: authRegion,
			icebergio.S3AccessKeyID: c1.AccessKeyID, icebergio.S3SecretAccessKey: c1.SecretAccessKey,
			icebergio.S3SessionToken: c1.SessionToken,
		}, "s3://mink/a/t1")
		require.NoError(t, err)
		rf := fsys.(icebergio.ReadFileIO)
		for _, k := range []string{t1meta, t1data} {
			got, err := rf.ReadFile("s3://mink/" + k)
			require.NoError(t, err, k)
			require.Equal(t, files[k], got, k)
		}
		_, err = rf.ReadFile("s3://mink/a/t2/metadata/00001-x.metadata.json")
		require.Error(t, err)
		require.Contains(t, err.Error(), "AccessDenied")
	})
}

// flat turns a header into do's map (one value each).
func flat(h http.Header) map[string]string {
	m := map[string]string{}
	for k := range h {
		m[k] = h.Get(k)
	}
	return m
}

// TestSignedForwarding: a signed read on a non-owner is forwarded with
// its signature and Host, and the owner checks it again.
func TestSignedForwarding(t *testing.T) {
	ctx := context.Background()
	pool, _ := pgtest.Pool(t)
	ha, hb := &lateHandler{}, &lateHandler{}
	tsA, tsB := httptest.NewServer(ha), httptest.NewServer(hb)
	defer tsA.Close()
	defer tsB.Close()
	members := []cluster.Member{
		{ID: "a", AdvertiseURL: tsA.URL, Roles: []string{cluster.RoleServer}},
		{ID: "b", AdvertiseURL: tsB.URL, Roles: []string{cluster.RoleServer}},
	}
	p := &principals{revoked: map[string]bool{}}
	ba, bb := newFakeBuilder(), newFakeBuilder()
	newServer := func(id string, b *fakeBuilder) *objects.Server {
		cfg := objects.Config{NodeID: id, CacheDir: t.TempDir(), ForwardKey: forwardKey}
		withAuth(p)(&cfg)
		insertTable(t, pool, "demo", "quakes")
		s, err := objects.New(cfg, pool, b, func() []cluster.Member { return members })
		require.NoError(t, err)
		t.Cleanup(s.Close)
		return s
	}
	sa, sb := newServer("a", ba), newServer("b", bb)
	var hA, hB http.Handler = sa, sb
	ha.h.Store(&hA)
	hb.h.Store(&hB)

	keyB := ownedBy(t, members, "b", 0)
	data := content(41, 100_000)
	bb.add(keyB, data)
	c := vendFor(t, "alice", time.Hour, "demo/quakes/")
	got, err := getObject(ctx, s3Client(&node{ts: tsA}, c, authRegion), "mink", keyB)
	require.NoError(t, err)
	require.Equal(t, data, got)
	require.EqualValues(t, 1, sa.Stats().Forwards)
	require.EqualValues(t, 0, ba.calls.Load(), "the owner built it")
	require.EqualValues(t, 1, bb.calls.Load())

	// Credentials for another table are refused by a before any forward.
	_, err = getObject(ctx, s3Client(&node{ts: tsA}, vendFor(t, "alice", time.Hour, "demo/other/"), authRegion), "mink", keyB)
	requireCode(t, err, "AccessDenied", "another table's credentials")
	require.EqualValues(t, 1, sa.Stats().Forwards)
}
