package objects_test

import (
	"context"
	"crypto/sha256"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/auth"
	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/objects"
)

// sumBuilder is a fakeBuilder that is an objects.SumBuilder, counting the
// BuildSum calls.
type sumBuilder struct{ *fakeBuilder }

func (b sumBuilder) BuildSum(ctx context.Context, key string) ([]byte, [sha256.Size]byte, error) {
	data, err := b.Build(ctx, key)
	if err != nil {
		return nil, [sha256.Size]byte{}, err
	}
	return data, sha256.Sum256(data), nil
}

// A build is served at once while its cache copy is written in the
// background; the next reads (the footer, then column chunks) get the same
// bytes and ETag without a second build, and the copy lands in the cache
// directory, whole, by the time Close returns.
func TestBuildServedWhileCacheCopyIsWritten(t *testing.T) {
	pool, _ := pgtest.Pool(t)
	b := newFakeBuilder()
	dk := dataKey(0, 0)
	data := content(11, 3<<20)
	b.add(dk, data)
	dir := t.TempDir()
	insertTable(t, pool, "demo", "quakes")
	s, err := objects.New(objects.Config{NodeID: "a", CacheDir: dir, Auth: auth.ModeNone}, pool, sumBuilder{b}, nil)
	require.NoError(t, err)
	ts := httptest.NewServer(s)
	defer ts.Close()

	resp, body := do(t, http.MethodGet, ts.URL+"/mink/"+dk, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, data, body)
	require.Equal(t, etag(data), resp.Header.Get("ETag"), "the SumBuilder's checksum is the ETag")
	for _, rg := range []string{"bytes=-8", "bytes=0-99", "bytes=1048576-2097151"} {
		resp, body := do(t, http.MethodGet, ts.URL+"/mink/"+dk, map[string]string{"Range": rg})
		require.Equal(t, http.StatusPartialContent, resp.StatusCode, rg)
		require.Equal(t, etag(data), resp.Header.Get("ETag"), rg)
		var first, last int
		switch rg {
		case "bytes=-8":
			first, last = len(data)-8, len(data)-1
		case "bytes=0-99":
			first, last = 0, 99
		default:
			first, last = 1<<20, 2<<20-1
		}
		require.Equal(t, data[first:last+1], body, rg)
	}
	require.EqualValues(t, 1, b.calls.Load(), "one build for every read")
	st := flushedStats(s)
	require.EqualValues(t, 1, st.Misses)
	require.EqualValues(t, 3, st.Hits)

	s.Close()
	des, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, des, 1, "the cache copy, and no temporary file")
	require.False(t, strings.HasPrefix(des[0].Name(), ".put-"))
	got, err := os.ReadFile(dir + "/" + des[0].Name())
	require.NoError(t, err)
	require.Equal(t, data, got)
}
