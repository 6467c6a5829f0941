package objects

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestEvictWhileReading: a file evicted while a reader has it open is
// still read to the end.
func TestEvictWhileReading(t *testing.T) {
	dir := t.TempDir()
	// Leftovers of a previous run are cleared; foreign files are kept.
	stale := filepath.Join(dir, cacheName("old"))
	require.NoError(t, os.WriteFile(stale, []byte("x"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, putTempPrefix+"1"), []byte("x"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "README"), []byte("x"), 0o644))
	c, err := newDiskCache(dir, 10)
	require.NoError(t, err)
	des, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, des, 1)
	require.Equal(t, "README", des[0].Name())

	a := []byte("0123456789")
	_, _, err = c.put("a", a, "ea")
	require.NoError(t, err)
	cf, ok := c.open("a")
	require.True(t, ok)
	defer cf.f.Close()
	head := make([]byte, 3)
	_, err = io.ReadFull(cf.f, head)
	require.NoError(t, err)

	stored, evicted, err := c.put("b", []byte("abcdefgh"), "eb")
	require.NoError(t, err)
	require.True(t, stored)
	require.Equal(t, 1, evicted)
	_, ok = c.open("a")
	require.False(t, ok)
	_, err = os.Stat(filepath.Join(dir, cacheName("a")))
	require.True(t, os.IsNotExist(err), "evicted file is unlinked")

	rest, err := io.ReadAll(cf.f)
	require.NoError(t, err)
	require.Equal(t, a, append(head, rest...))

	// Replacing a file while it is read keeps the reader on its bytes.
	cb, ok := c.open("b")
	require.True(t, ok)
	defer cb.f.Close()
	_, _, err = c.put("b", []byte("ABCDEFGH"), "eb2")
	require.NoError(t, err)
	got, err := io.ReadAll(cb.f)
	require.NoError(t, err)
	require.True(t, bytes.Equal([]byte("abcdefgh"), got))
	files, n := c.usage()
	require.Equal(t, 1, files)
	require.EqualValues(t, 8, n)
}

func TestClassify(t *testing.T) {
	for key, want := range map[string]objectKind{
		"demo/quakes/metadata/00001-x.metadata.json": kindMetadata,
		"a/b/c/quakes/metadata/snap-1.avro":          kindMetadata,
		"demo/quakes/data/0/0-100-1.parquet":         kindData,
		"demo/quakes~dlq/data/12/100-200-1.parquet":  kindData,
		"a/b/quakes/data/3/0-1-1.parquet":            kindData,
		"quakes/metadata/x.json":                     kindNone,
		"quakes/data/0/0-1-1.parquet":                kindNone,
		"demo/quakes/data/p/0-1-1.parquet":           kindNone,
		"demo/quakes/data/0/0-1-1.csv":               kindNone,
		"demo//quakes/metadata/x.json":               kindNone,
		"demo/../metadata/x.json":                    kindNone,
		"demo/quakes/other/x":                        kindNone,
		"demo/quakes/metadata/":                      kindNone,
		"":                                           kindNone,
		"/demo/quakes/data/0/0-1-1.parquet":          kindNone,
		"demo/quakes/data/0/0-1-1.parquet/":          kindNone,
	} {
		require.Equal(t, want, classify(key), key)
	}
}

// fileConn is a ResponseWriter whose ReadFrom records what it was given,
// as a connection that can sendfile would get it.
type fileConn struct {
	*httptest.ResponseRecorder
	srcs []io.Reader
}

func (c *fileConn) ReadFrom(src io.Reader) (int64, error) {
	c.srcs = append(c.srcs, src)
	return io.Copy(c.ResponseRecorder, src)
}

// TestSizedFile: a cached file served through http.ServeContent reaches
// the connection's ReadFrom as the *os.File (so sendfile applies), at the
// range's first byte, and seeks answer from the known size.
func TestSizedFile(t *testing.T) {
	data := make([]byte, 100_000)
	for i := range data {
		data[i] = byte(i * 7)
	}
	path := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(path, data, 0o644))
	s := &Server{metrics: &metrics{}}
	for _, c := range []struct {
		rng         string
		first, last int
	}{{"", 0, len(data) - 1}, {"bytes=1000-2999", 1000, 2999}, {"bytes=-10", len(data) - 10, len(data) - 1}, {"bytes=99999-", 99999, 99999}} {
		f, err := os.Open(path)
		require.NoError(t, err)
		sf := &sizedFile{f: f, size: int64(len(data))}
		req := httptest.NewRequest(http.MethodGet, "/mink/k", nil)
		if c.rng != "" {
			req.Header.Set("Range", c.rng)
		}
		conn := &fileConn{ResponseRecorder: httptest.NewRecorder()}
		sw := &serveWriter{ResponseWriter: conn, s: s, r: req, key: "k"}
		http.ServeContent(sw, normalizeRequest(req, sf.size), "", time.Time{}, sf)
		require.NoError(t, f.Close())
		require.Equal(t, data[c.first:c.last+1], conn.Body.Bytes(), c.rng)
		require.EqualValues(t, c.last+1-c.first, sw.n, c.rng)
		require.Len(t, conn.srcs, 1, c.rng)
		lr, ok := conn.srcs[0].(*io.LimitedReader)
		require.True(t, ok, "%s: %T", c.rng, conn.srcs[0])
		require.Same(t, f, lr.R, c.rng)
		require.EqualValues(t, c.last+1, sf.pos, c.rng)
	}

	// Seek and Read as an io.ReadSeeker does.
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	sf := &sizedFile{f: f, size: int64(len(data))}
	end, err := sf.Seek(0, io.SeekEnd)
	require.NoError(t, err)
	require.EqualValues(t, len(data), end)
	_, err = sf.Seek(-1, io.SeekStart)
	require.Error(t, err)
	_, err = sf.Seek(0, 42)
	require.Error(t, err)
	at, err := sf.Seek(-100, io.SeekCurrent)
	require.NoError(t, err)
	require.EqualValues(t, len(data)-100, at)
	buf := make([]byte, 40)
	_, err = io.ReadFull(sf, buf)
	require.NoError(t, err)
	require.Equal(t, data[len(data)-100:len(data)-60], buf)
	_, err = io.ReadFull(sf, buf)
	require.NoError(t, err)
	require.Equal(t, data[len(data)-60:len(data)-20], buf)
	_, err = sf.Seek(5, io.SeekStart)
	require.NoError(t, err)
	_, err = io.ReadFull(sf, buf)
	require.NoError(t, err)
	require.Equal(t, data[5:45], buf)
}

// TestNormalizeRequestUnchanged: a request that needs no change is passed
// on as it is (no copy of its headers per GET).
func TestNormalizeRequestUnchanged(t *testing.T) {
	for _, rng := range []string{"", "bytes=0-99", "bytes=1000-"} {
		req := httptest.NewRequest(http.MethodGet, "/mink/k", nil)
		if rng != "" {
			req.Header.Set("Range", rng)
		}
		// bytes=1000- is unsatisfiable and already in the form that
		// ServeContent answers with 416.
		require.Same(t, req, normalizeRequest(req, 1000), rng)
	}
	for rng, want := range map[string]string{"bytes=-10": "bytes=990-999", "bytes=5-5000": "bytes=5-999", "bytes=0-1,5-6": "", "items=0-1": ""} {
		req := httptest.NewRequest(http.MethodGet, "/mink/k", nil)
		req.Header.Set("Range", rng)
		got := normalizeRequest(req, 1000)
		require.NotSame(t, req, got, rng)
		require.Equal(t, want, got.Header.Get("Range"), rng)
		require.Equal(t, rng, req.Header.Get("Range"), "the request itself is not changed")
	}
	req := httptest.NewRequest(http.MethodGet, "/mink/k", nil)
	req.Header.Add("If-None-Match", `"a"`)
	req.Header.Add("If-None-Match", `"b"`)
	got := normalizeRequest(req, 1000)
	require.Equal(t, []string{`"a", "b"`}, got.Header.Values("If-None-Match"))
}
