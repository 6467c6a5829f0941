package objects_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/auth"
	"github.com/minkhq/mink/cluster"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/objects"
)

func TestMain(m *testing.M) { testkit.MainPostgres(m) }

// errPanic makes fakeBuilder panic.
var errPanic = errors.New("panic")

// fakeBuilder stands in for the Kafka-reading builder: it returns the
// bytes it was given for a key, counting calls.
type fakeBuilder struct {
	calls atomic.Int64
	delay time.Duration

	mu    sync.Mutex
	files map[string][]byte
	errs  map[string]error
}

func newFakeBuilder() *fakeBuilder {
	return &fakeBuilder{files: map[string][]byte{}, errs: map[string]error{}}
}

func (f *fakeBuilder) Build(ctx context.Context, key string) ([]byte, error) {
	f.calls.Add(1)
	if f.delay > 0 {
		select {
		case <-time.After(f.delay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.errs[key]; err != nil {
		if err == errPanic {
			panic("builder bug")
		}
		return nil, fmt.Errorf("build %s: %w", key, err)
	}
	b, ok := f.files[key]
	if !ok {
		return nil, fmt.Errorf("build %s: %w", key, objects.ErrNotFound)
	}
	return bytes.Clone(b), nil
}

func (f *fakeBuilder) add(key string, b []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.files[key] = b
}

func (f *fakeBuilder) fail(key string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs[key] = err
}

// content returns n pseudo-random bytes, the same for the same seed.
func content(seed uint64, n int) []byte {
	r := rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8), byte(seed >> 16)})
	b := make([]byte, n)
	_, _ = r.Read(b)
	return b
}

func dataKey(partition, start int) string {
	return fmt.Sprintf("demo/quakes/data/%d/%d-%d-1.parquet", partition, start, start+100)
}

// insertTable adds a tables row for ns.name unless it has one and returns
// its id: the S3 API serves only the keys of live tables.
func insertTable(t testing.TB, pool *pgxpool.Pool, ns, name string) int64 {
	t.Helper()
	var id int64
	err := pool.QueryRow(context.Background(), `
		INSERT INTO tables (namespace, name, topic, value_format, schema_json, table_uuid, location, metadata_location)
		VALUES ($1, $2, $2, 'json', '{}', gen_random_uuid(), $3, $4)
		ON CONFLICT (namespace, name) DO UPDATE SET name = EXCLUDED.name RETURNING id`,
		ns, name, "s3://mink/"+ns+"/"+name, "s3://mink/"+ns+"/"+name+"/metadata/00000.metadata.json",
	).Scan(&id)
	require.NoError(t, err)
	return id
}

func insertMetadataFile(t *testing.T, pool *pgxpool.Pool, tableID int64, key string, b []byte) {
	t.Helper()
	_, err := pool.Exec(context.Background(),
		`INSERT INTO metadata_files (path, table_id, content) VALUES ($1, $2, $3)`, key, tableID, b)
	require.NoError(t, err)
}

// node is one Server behind its own HTTP listener.
type node struct {
	s   *objects.Server
	ts  *httptest.Server
	b   *fakeBuilder
	cfg objects.Config
}

// startNode starts a Server with a fresh cache directory. members may be
// nil (a node alone).
func startNode(t testing.TB, id string, pool *pgxpool.Pool, b *fakeBuilder, members func() []cluster.Member, mod func(*objects.Config)) *node {
	t.Helper()
	cfg := objects.Config{NodeID: id, CacheDir: t.TempDir(), Auth: auth.ModeNone, ForwardKey: forwardKey}
	if mod != nil {
		mod(&cfg)
	}
	// The table of dataKey (not on a pool that cannot connect).
	_, _ = pool.Exec(context.Background(), `
		INSERT INTO tables (namespace, name, topic, value_format, schema_json, table_uuid, location, metadata_location)
		VALUES ('demo', 'quakes', 'quakes', 'json', '{}', gen_random_uuid(), 's3://mink/demo/quakes', 's3://mink/demo/quakes/metadata/0.json')
		ON CONFLICT DO NOTHING`)
	s, err := objects.New(cfg, pool, b, members)
	require.NoError(t, err)
	ts := httptest.NewServer(s)
	t.Cleanup(func() { ts.Close(); s.Close() })
	return &node{s: s, ts: ts, b: b, cfg: cfg}
}

// forwardKey is the forward key of every test node: one cluster.
var forwardKey = auth.DeriveKey([]byte("objects test cluster"), auth.PurposeForward)

// forwarded returns the headers of a read node from forwarded to node to
// at url (signed with forwardKey), so the receiver serves it itself.
func forwarded(t testing.TB, method, url, from, to string) map[string]string {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	require.NoError(t, err)
	auth.SignForward(forwardKey, req, from, to)
	hdr := map[string]string{}
	for k := range req.Header {
		hdr[k] = req.Header.Get(k)
	}
	return hdr
}

// do sends one request and returns the response with its body read.
func do(t testing.TB, method, url string, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	require.NoError(t, err)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	return testkit.Send(t, req)
}

// etag is the ETag the API sends for content b.
func etag(b []byte) string {
	sum := sha256.Sum256(b)
	return `"` + hex.EncodeToString(sum[:]) + `"`
}

// s3Error is an S3 XML error body.
type s3Error struct {
	XMLName   xml.Name `xml:"Error"`
	Code      string   `xml:"Code"`
	Message   string   `xml:"Message"`
	Key       string   `xml:"Key"`
	RequestID string   `xml:"RequestId"`
}

func parseS3Error(t testing.TB, body []byte) s3Error {
	t.Helper()
	var e s3Error
	require.NoError(t, xml.Unmarshal(body, &e), string(body))
	require.NotEmpty(t, e.RequestID)
	return e
}

// flushedStats returns s's counters once the cache copies of the builds it
// served are written (they are written in the background).
func flushedStats(s *objects.Server) objects.Stats {
	s.Flush()
	return s.Stats()
}

// registerNode adds a live nodes row for id, as a member's registration
// does (cluster.Senders reads it).
func registerNode(t testing.TB, pool *pgxpool.Pool, id string) {
	t.Helper()
	_, err := pool.Exec(context.Background(), `
		INSERT INTO nodes (id, instance, advertise_url, roles, expires_at)
		VALUES ($1, 'test', 'http://127.0.0.1:1', '{server}', now() + interval '1 hour')`, id)
	require.NoError(t, err)
}
