package objects_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/minkhq/mink/internal/pgtest"
)

// BenchmarkCachedGet measures GET throughput of a cached 128 MiB data file
// over loopback.
func BenchmarkCachedGet(b *testing.B) {
	pool, _ := pgtest.Pool(b)
	n := startNode(b, "a", pool, newFakeBuilder(), nil, nil)
	dk := dataKey(0, 0)
	data := content(1, 128<<20)
	n.s.Put(dk, data)
	url := n.ts.URL + "/mink/" + dk
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		resp, err := client.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		m, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || m != int64(len(data)) || resp.StatusCode != http.StatusOK {
			b.Fatalf("read %d bytes, status %d: %v", m, resp.StatusCode, err)
		}
	}
}

// BenchmarkCachedFooterGet measures small range reads (a Parquet footer)
// of a cached file: the per-request cost.
func BenchmarkCachedFooterGet(b *testing.B) {
	pool, _ := pgtest.Pool(b)
	n := startNode(b, "a", pool, newFakeBuilder(), nil, nil)
	dk := dataKey(0, 0)
	n.s.Put(dk, content(1, 1<<20))
	req, _ := http.NewRequest(http.MethodGet, n.ts.URL+"/mink/"+dk, nil)
	req.Header.Set("Range", "bytes=-65536")
	b.SetBytes(65536)
	b.ResetTimer()
	for b.Loop() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// discardResponse is a ResponseWriter that drops the body, for measuring
// the handler alone (no connection, no client).
type discardResponse struct {
	h    http.Header
	code int
	n    int64
}

func (d *discardResponse) Header() http.Header { return d.h }
func (d *discardResponse) WriteHeader(code int) {
	if d.code == 0 {
		d.code = code
	}
}
func (d *discardResponse) Write(p []byte) (int, error) {
	d.WriteHeader(http.StatusOK)
	d.n += int64(len(p))
	return len(p), nil
}

// BenchmarkCachedRangeHandler measures the server's own cost of one ranged
// GET of a cached data file (a Parquet column chunk), without the network
// or a client: what a scan pays per GET on the node.
func BenchmarkCachedRangeHandler(b *testing.B) {
	pool, _ := pgtest.Pool(b)
	n := startNode(b, "a", pool, newFakeBuilder(), nil, nil)
	dk := dataKey(0, 0)
	n.s.Put(dk, content(1, 1<<20))
	req, _ := http.NewRequest(http.MethodGet, "/mink/"+dk, nil)
	req.Header.Set("Range", "bytes=4096-20479")
	req.Header.Set("User-Agent", "aws-sdk-go-v2/1.36.3")
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=mink/20261201/us-east-1/s3/aws4_request")
	req.Header.Set("X-Amz-Date", "20261201T000000Z")
	req.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
	b.SetBytes(16384)
	b.ReportAllocs()
	w := &discardResponse{h: http.Header{}}
	for b.Loop() {
		clear(w.h)
		w.code, w.n = 0, 0
		n.s.ServeHTTP(w, req)
		if w.code != http.StatusPartialContent || w.n != 16384 {
			b.Fatalf("status %d, %d bytes", w.code, w.n)
		}
	}
}
