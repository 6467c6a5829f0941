package objects_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"strconv"
	"testing"

	icebergio "github.com/apache/iceberg-go/io"
	_ "github.com/apache/iceberg-go/io/gocloud/s3"
	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/objects"
)

// s3FS is iceberg-go's S3 FileIO (the AWS SDK) pointed at n.
func s3FS(t *testing.T, n *node) icebergio.IO {
	t.Helper()
	fsys, err := icebergio.LoadFS(context.Background(), map[string]string{
		icebergio.S3EndpointURL:     n.ts.URL,
		icebergio.S3Region:          "us-east-1",
		icebergio.S3AccessKeyID:     "mink",
		icebergio.S3SecretAccessKey: "mink",
	}, "s3://mink/demo/quakes")
	require.NoError(t, err)
	return fsys
}

// TestIcebergS3Client reads a metadata file and a data file through the
// AWS SDK, whole and with footer-style ReadAt, proving the SDK accepts the
// answers.
func TestIcebergS3Client(t *testing.T) {
	pool, _ := pgtest.Pool(t)
	tid := insertTable(t, pool, "demo", "quakes")
	metaKey := "demo/quakes/metadata/00001-abc.metadata.json"
	meta := []byte(`{"format-version":2,"table-uuid":"x","location":"s3://mink/demo/quakes"}`)
	insertMetadataFile(t, pool, tid, metaKey, meta)
	manifestKey := "demo/quakes/metadata/snap-1-1-abc.avro"
	manifest := content(7, 5000)
	insertMetadataFile(t, pool, tid, manifestKey, manifest)

	b := newFakeBuilder()
	dk := dataKey(0, 0)
	data := content(1, 3<<20+17)
	b.add(dk, data)
	n := startNode(t, "a", pool, b, nil, nil)
	fsys := s3FS(t, n)

	for _, c := range []struct {
		key  string
		want []byte
	}{{metaKey, meta}, {manifestKey, manifest}, {dk, data}} {
		loc := "s3://mink/" + c.key
		f, err := fsys.Open(loc)
		require.NoError(t, err, c.key)
		got, err := io.ReadAll(f)
		require.NoError(t, err)
		require.Equal(t, c.want, got, c.key)
		st, err := f.Stat()
		require.NoError(t, err)
		require.EqualValues(t, len(c.want), st.Size())

		// A Parquet reader's first reads: the last 8 bytes (footer length
		// and magic), then the footer before them.
		ra, ok := f.(io.ReaderAt)
		require.True(t, ok)
		tail := make([]byte, 8)
		_, err = ra.ReadAt(tail, st.Size()-8)
		require.NoError(t, err)
		require.Equal(t, c.want[len(c.want)-8:], tail)
		footer := make([]byte, min(1000, len(c.want)-8))
		_, err = ra.ReadAt(footer, st.Size()-8-int64(len(footer)))
		require.NoError(t, err)
		require.Equal(t, c.want[len(c.want)-8-len(footer):len(c.want)-8], footer)
		require.NoError(t, f.Close())

		rf, ok := fsys.(icebergio.ReadFileIO)
		require.True(t, ok)
		whole, err := rf.ReadFile(loc)
		require.NoError(t, err)
		require.Equal(t, c.want, whole)
	}

	// HEAD through the SDK.
	stat, ok := fsys.(icebergio.StatIO)
	require.True(t, ok)
	fi, err := stat.Stat("s3://mink/" + dk)
	require.NoError(t, err)
	require.EqualValues(t, len(data), fi.Size())

	// A missing key is fs.ErrNotExist: the SDK understood NoSuchKey.
	_, err = fsys.Open("s3://mink/" + dataKey(0, 999))
	require.True(t, errors.Is(err, fs.ErrNotExist), "got %v", err)
	_, err = fsys.Open("s3://mink/demo/quakes/metadata/missing.json")
	require.True(t, errors.Is(err, fs.ErrNotExist), "got %v", err)

	require.EqualValues(t, 2, b.calls.Load(), "one build for the data file, one for the missing key")
}

// TestS3ErrorsNotReadAsMissing: iceberg-go's S3 client (gocloud.dev
// s3blob before v0.47) takes any error whose text holds "301" for a
// missing bucket, fs.ErrNotExist (google/go-cloud#3746). The error of a
// file that exists must never read so: the request id in that text never
// holds "301" (without that, about one error in 290 did, so one of 3,000
// opens), nor does the message of a failed build (its cause, which may
// name offsets such as the 301 of this key, stays in the log).
func TestS3ErrorsNotReadAsMissing(t *testing.T) {
	t.Setenv("AWS_MAX_ATTEMPTS", "1") // one request per open: a 500 is not retried
	pool, _ := pgtest.Pool(t)
	b := newFakeBuilder()
	stale, broken := dataKey(0, 0), dataKey(0, 301)
	b.fail(stale, objects.ErrChecksumMismatch)
	b.fail(broken, errors.New("kafka: no leader"))
	n := startNode(t, "a", pool, b, nil, nil)
	fsys := s3FS(t, n)

	for i := 0; i < 3000; i++ {
		_, err := fsys.Open("s3://mink/" + stale)
		require.Error(t, err)
		require.False(t, errors.Is(err, fs.ErrNotExist), "open %d: %v", i, err)
		require.Contains(t, err.Error(), "StatusCode: 500", "open %d", i)
		require.Contains(t, err.Error(), "api error InternalError: The rebuilt data file differs")
	}
	_, err := fsys.Open("s3://mink/" + broken)
	require.Error(t, err)
	require.False(t, errors.Is(err, fs.ErrNotExist), "%v", err)
	require.Contains(t, err.Error(), "StatusCode: 500")
	require.NotContains(t, err.Error(), "no leader", "the cause is logged, not sent")
}

// TestRawHTTP checks each Range form, HEAD, conditionals and the S3 errors.
func TestRawHTTP(t *testing.T) {
	pool, _ := pgtest.Pool(t)
	tid := insertTable(t, pool, "demo", "quakes")
	metaKey := "demo/quakes/metadata/00001-abc.metadata.json"
	meta := []byte(`{"format-version":2}`)
	insertMetadataFile(t, pool, tid, metaKey, meta)
	b := newFakeBuilder()
	dk := dataKey(0, 0)
	data := content(2, 10000)
	b.add(dk, data)
	n := startNode(t, "a", pool, b, nil, nil)
	url := n.ts.URL + "/mink/" + dk
	size := len(data)

	t.Run("ranges", func(t *testing.T) {
		for _, c := range []struct {
			rng        string
			start, end int // inclusive
		}{
			{"bytes=10-19", 10, 19},
			{"bytes=9990-", 9990, size - 1},
			{"bytes=-16", size - 16, size - 1},
			{"bytes=9000-20000", 9000, size - 1}, // end past the size is clamped
			{"bytes=0-0", 0, 0},
		} {
			resp, body := do(t, http.MethodGet, url, map[string]string{"Range": c.rng})
			require.Equal(t, http.StatusPartialContent, resp.StatusCode, c.rng)
			require.Equal(t, fmt.Sprintf("bytes %d-%d/%d", c.start, c.end, size), resp.Header.Get("Content-Range"), c.rng)
			require.Equal(t, strconv.Itoa(c.end-c.start+1), resp.Header.Get("Content-Length"), c.rng)
			require.Equal(t, data[c.start:c.end+1], body, c.rng)
		}
	})

	t.Run("416", func(t *testing.T) {
		resp, body := do(t, http.MethodGet, url, map[string]string{"Range": fmt.Sprintf("bytes=%d-", size)})
		require.Equal(t, http.StatusRequestedRangeNotSatisfiable, resp.StatusCode)
		require.Equal(t, fmt.Sprintf("bytes */%d", size), resp.Header.Get("Content-Range"))
		require.Equal(t, "application/xml", resp.Header.Get("Content-Type"))
		require.Equal(t, "InvalidRange", parseS3Error(t, body).Code)
	})

	t.Run("get and head", func(t *testing.T) {
		resp, body := do(t, http.MethodGet, url, nil)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Equal(t, data, body)
		require.Equal(t, etag(data), resp.Header.Get("ETag"))
		require.Equal(t, "bytes", resp.Header.Get("Accept-Ranges"))
		lm := resp.Header.Get("Last-Modified")
		require.NotEmpty(t, lm)

		resp, body = do(t, http.MethodHead, url, nil)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Empty(t, body)
		require.Equal(t, strconv.Itoa(size), resp.Header.Get("Content-Length"))
		require.Equal(t, etag(data), resp.Header.Get("ETag"))
		require.Equal(t, lm, resp.Header.Get("Last-Modified"), "Last-Modified is stable")

		resp, _ = do(t, http.MethodGet, url, map[string]string{"If-None-Match": etag(data)})
		require.Equal(t, http.StatusNotModified, resp.StatusCode)
		resp, body = do(t, http.MethodGet, url, map[string]string{"If-Match": `"other"`})
		require.Equal(t, http.StatusPreconditionFailed, resp.StatusCode)
		require.Equal(t, "PreconditionFailed", parseS3Error(t, body).Code)

		resp, body = do(t, http.MethodGet, n.ts.URL+"/mink/"+metaKey, nil)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Equal(t, meta, body)
		require.Equal(t, etag(meta), resp.Header.Get("ETag"))
		require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
		resp, body = do(t, http.MethodGet, n.ts.URL+"/mink/"+metaKey, map[string]string{"Range": "bytes=-3"})
		require.Equal(t, http.StatusPartialContent, resp.StatusCode)
		require.Equal(t, meta[len(meta)-3:], body)
	})

	t.Run("errors", func(t *testing.T) {
		for _, c := range []struct {
			method, path string
			status       int
			code         string
		}{
			{http.MethodGet, "/mink/" + dataKey(0, 500), 404, "NoSuchKey"},
			{http.MethodGet, "/mink/demo/quakes/metadata/nope.avro", 404, "NoSuchKey"},
			{http.MethodGet, "/mink/demo/quakes/other/file", 404, "NoSuchKey"},
			{http.MethodGet, "/mink/demo/quakes/data/x/0-1-1.parquet", 404, "NoSuchKey"},
			{http.MethodGet, "/other/" + dk, 404, "NoSuchBucket"},
			{http.MethodPut, "/mink/" + dk, 405, "MethodNotAllowed"},
			{http.MethodDelete, "/mink/" + dk, 405, "MethodNotAllowed"},
			{http.MethodPost, "/mink/" + dk, 405, "MethodNotAllowed"},
			{http.MethodGet, "/mink", 501, "NotImplemented"},
		} {
			resp, body := do(t, c.method, n.ts.URL+c.path, nil)
			require.Equal(t, c.status, resp.StatusCode, "%s %s", c.method, c.path)
			require.Equal(t, "application/xml", resp.Header.Get("Content-Type"))
			e := parseS3Error(t, body)
			require.Equal(t, c.code, e.Code, "%s %s", c.method, c.path)
			require.Equal(t, resp.Header.Get("x-amz-request-id"), e.RequestID)
		}
		resp, body := do(t, http.MethodGet, n.ts.URL+"/mink/"+dataKey(0, 500), nil)
		require.Equal(t, dataKey(0, 500), parseS3Error(t, body).Key)
		require.Equal(t, 404, resp.StatusCode)

		resp, body = do(t, http.MethodHead, n.ts.URL+"/mink/"+dataKey(0, 500), nil)
		require.Equal(t, http.StatusNotFound, resp.StatusCode)
		require.Empty(t, body)
	})

	t.Run("head bucket", func(t *testing.T) {
		resp, _ := do(t, http.MethodHead, n.ts.URL+"/mink", nil)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		resp, _ = do(t, http.MethodHead, n.ts.URL+"/other", nil)
		require.Equal(t, http.StatusNotFound, resp.StatusCode)
	})
}
