package objects_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/auth"
	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/objects"
	"github.com/minkhq/mink/outage"
)

// TestBuildOnce: 20 concurrent reads of a cold key build it once and all
// get the same bytes.
func TestBuildOnce(t *testing.T) {
	pool, _ := pgtest.Pool(t)
	b := newFakeBuilder()
	b.delay = 200 * time.Millisecond
	dk := dataKey(3, 1000)
	data := content(3, 1<<20)
	b.add(dk, data)
	n := startNode(t, "a", pool, b, nil, nil)

	const readers = 20
	bodies := make([][]byte, readers)
	statuses := make([]int, readers)
	var wg sync.WaitGroup
	for i := range readers {
		wg.Go(func() {
			req, _ := http.NewRequest(http.MethodGet, n.ts.URL+"/mink/"+dk, nil)
			if i%2 == 1 {
				req.Header.Set("Range", "bytes=-100") // a footer read waits too
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return
			}
			defer resp.Body.Close()
			statuses[i] = resp.StatusCode
			var sb strings.Builder
			buf := make([]byte, 64<<10)
			for {
				k, err := resp.Body.Read(buf)
				sb.Write(buf[:k])
				if err != nil {
					break
				}
			}
			bodies[i] = []byte(sb.String())
		})
	}
	wg.Wait()
	require.EqualValues(t, 1, b.calls.Load(), "the builder runs once per key")
	for i := range readers {
		if i%2 == 1 {
			require.Equal(t, http.StatusPartialContent, statuses[i])
			require.Equal(t, data[len(data)-100:], bodies[i])
		} else {
			require.Equal(t, http.StatusOK, statuses[i])
			require.Equal(t, data, bodies[i])
		}
	}
	st := flushedStats(n.s)
	require.EqualValues(t, 1, st.Builds)
	require.EqualValues(t, readers, st.Hits+st.Misses)
	require.Equal(t, 1, st.Files)
	require.EqualValues(t, len(data), st.Bytes)

	// Later reads are cache hits.
	resp, body := do(t, http.MethodGet, n.ts.URL+"/mink/"+dk, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, data, body)
	require.EqualValues(t, 1, b.calls.Load())
}

// TestEviction: a small cache evicts least recently used files and still
// serves every file correctly, rebuilding what it evicted.
func TestEviction(t *testing.T) {
	pool, _ := pgtest.Pool(t)
	b := newFakeBuilder()
	files := map[string][]byte{}
	for i := range 6 {
		k := dataKey(0, i*100)
		files[k] = content(uint64(10+i), 1000+i)
		b.add(k, files[k])
	}
	n := startNode(t, "a", pool, b, nil, func(c *objects.Config) { c.CacheSize = 3500 })

	get := func(k string) {
		t.Helper()
		resp, body := do(t, http.MethodGet, n.ts.URL+"/mink/"+k, nil)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Equal(t, files[k], body)
		n.s.Flush()
	}
	for i := range 6 {
		get(dataKey(0, i*100))
	}
	st := flushedStats(n.s)
	require.EqualValues(t, 6, st.Builds)
	require.EqualValues(t, 3, st.Evictions)
	require.Equal(t, 3, st.Files)
	require.LessOrEqual(t, st.Bytes, int64(3500))

	// The three newest are cached; reading key 3 makes it recent, so the
	// next build evicts key 4.
	get(dataKey(0, 300))
	require.EqualValues(t, 6, b.calls.Load())
	get(dataKey(0, 0))
	require.EqualValues(t, 7, b.calls.Load(), "evicted file is rebuilt")
	get(dataKey(0, 300))
	get(dataKey(0, 500))
	require.EqualValues(t, 7, b.calls.Load())
	get(dataKey(0, 400))
	require.EqualValues(t, 8, b.calls.Load(), "least recently used was evicted")

	// A file larger than the whole cache is served, not cached.
	big := dataKey(1, 0)
	files[big] = content(99, 5000)
	b.add(big, files[big])
	get(big)
	get(big)
	require.EqualValues(t, 10, b.calls.Load())
}

// TestChecksumMismatch: a rebuild that differs from the recorded checksum
// is a 500 with a clear S3 error, and nothing is cached.
func TestChecksumMismatch(t *testing.T) {
	pool, _ := pgtest.Pool(t)
	b := newFakeBuilder()
	dk := dataKey(0, 0)
	b.add(dk, content(1, 100))
	b.fail(dk, objects.ErrChecksumMismatch)
	n := startNode(t, "a", pool, b, nil, nil)

	for range 2 {
		resp, body := do(t, http.MethodGet, n.ts.URL+"/mink/"+dk, nil)
		require.Equal(t, http.StatusInternalServerError, resp.StatusCode)
		e := parseS3Error(t, body)
		require.Equal(t, "InternalError", e.Code)
		require.Contains(t, e.Message, "checksum")
		require.Equal(t, dk, e.Key)
	}
	st := flushedStats(n.s)
	require.Zero(t, st.Files)
	require.EqualValues(t, 2, st.Builds, "a failed build is not remembered")
	require.EqualValues(t, 2, st.BuildErrors)

	// Other builder errors.
	b.fail(dk, outage.ErrUnavailable)
	resp, body := do(t, http.MethodGet, n.ts.URL+"/mink/"+dk, nil)
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	require.Equal(t, "SlowDown", parseS3Error(t, body).Code)
	require.NotEmpty(t, resp.Header.Get("Retry-After"))
	b.fail(dk, context.DeadlineExceeded)
	resp, body = do(t, http.MethodGet, n.ts.URL+"/mink/"+dk, nil)
	require.Equal(t, http.StatusInternalServerError, resp.StatusCode)
	require.Equal(t, "InternalError", parseS3Error(t, body).Code)

	// A builder that panics fails the read, not the node.
	b.fail(dk, errPanic)
	resp, body = do(t, http.MethodGet, n.ts.URL+"/mink/"+dk, nil)
	require.Equal(t, http.StatusInternalServerError, resp.StatusCode)
	require.Equal(t, "InternalError", parseS3Error(t, body).Code)
	require.Zero(t, flushedStats(n.s).Files)
}

// TestPostgresDown: with PostgreSQL gone, a metadata file not in memory
// answers 503 SlowDown, while cached files (data and metadata) are served.
func TestPostgresDown(t *testing.T) {
	pool, url := pgtest.Pool(t)
	tid := insertTable(t, pool, "demo", "quakes")
	seen, unseen := "demo/quakes/metadata/00001.metadata.json", "demo/quakes/metadata/00002.metadata.json"
	insertMetadataFile(t, pool, tid, seen, []byte(`{"v":1}`))
	insertMetadataFile(t, pool, tid, unseen, []byte(`{"v":2}`))

	// The node has a pool of its own, so the test can take it away.
	own, err := pgxpool.New(context.Background(), url)
	require.NoError(t, err)
	defer own.Close()
	b := newFakeBuilder()
	n := startNode(t, "a", own, b, nil, nil)
	dk := dataKey(0, 0)
	data := content(5, 4096)
	n.s.Put(dk, data) // warmed by the indexer

	resp, _ := do(t, http.MethodGet, n.ts.URL+"/mink/"+seen, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	own.Close()

	resp, body := do(t, http.MethodGet, n.ts.URL+"/mink/"+unseen, nil)
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	require.Equal(t, "SlowDown", parseS3Error(t, body).Code)
	ra, err := strconv.Atoi(resp.Header.Get("Retry-After"))
	require.NoError(t, err)
	require.Positive(t, ra)

	resp, body = do(t, http.MethodGet, n.ts.URL+"/mink/"+seen, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, `{"v":1}`, string(body))
	resp, body = do(t, http.MethodGet, n.ts.URL+"/mink/"+dk, map[string]string{"Range": "bytes=-8"})
	require.Equal(t, http.StatusPartialContent, resp.StatusCode)
	require.Equal(t, data[len(data)-8:], body)
	require.Zero(t, b.calls.Load())

	// A database that refuses connections is unavailable too.
	refused, err := pgxpool.New(context.Background(), "postgres://mink@127.0.0.1:1/mink?connect_timeout=2")
	require.NoError(t, err)
	defer refused.Close()
	n2 := startNode(t, "b", refused, b, nil, nil)
	resp, body = do(t, http.MethodGet, n2.ts.URL+"/mink/"+unseen, nil)
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	require.Equal(t, "SlowDown", parseS3Error(t, body).Code)
}

// TestMetrics: the Prometheus counters follow the reads.
func TestMetrics(t *testing.T) {
	pool, _ := pgtest.Pool(t)
	reg := prometheus.NewRegistry()
	b := newFakeBuilder()
	dk := dataKey(0, 0)
	data := content(8, 1000)
	b.add(dk, data)
	n := startNode(t, "a", pool, b, nil, func(c *objects.Config) { c.Registerer = reg })
	for range 3 {
		resp, _ := do(t, http.MethodGet, n.ts.URL+"/mink/"+dk, nil)
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}
	// The handler counts bytes after the client may have read them all.
	require.Eventually(t, func() bool { return flushedStats(n.s).BytesServed == 3000 }, 5*time.Second, 10*time.Millisecond)
	gather := func() map[string]float64 {
		values := map[string]float64{}
		mfs, err := reg.Gather()
		require.NoError(t, err)
		for _, mf := range mfs {
			for _, m := range mf.GetMetric() {
				switch {
				case m.GetCounter() != nil:
					values[mf.GetName()] += m.GetCounter().GetValue()
				case m.GetGauge() != nil:
					values[mf.GetName()] += m.GetGauge().GetValue()
				case m.GetHistogram() != nil:
					values[mf.GetName()] += float64(m.GetHistogram().GetSampleCount())
				}
			}
		}
		return values
	}
	// The build's cache copy is written in the background.
	require.Eventually(t, func() bool { return gather()["mink_objects_cache_bytes"] == 1000 }, 5*time.Second, 10*time.Millisecond)
	values := gather()
	require.Equal(t, 2.0, values["mink_objects_cache_hits_total"])
	require.Equal(t, 1.0, values["mink_objects_cache_misses_total"])
	require.Equal(t, 1.0, values["mink_objects_build_seconds"])
	require.Equal(t, 3000.0, values["mink_objects_served_bytes_total"])
	require.Equal(t, 1000.0, values["mink_objects_cache_bytes"])
	require.EqualValues(t, 3000, flushedStats(n.s).BytesServed)

	// A second Server on the same registry must say what to do.
	_, err := objects.New(objects.Config{NodeID: "b", CacheDir: t.TempDir(), Registerer: reg, Auth: auth.ModeNone}, pool, b, nil)
	require.ErrorContains(t, err, "node_id")
}
