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
