package objects_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/auth"
	"github.com/minkhq/mink/cluster"
	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/objects"
)

// rangeCase is one request and the answer RFC 9110 §14 asks for.
type rangeCase struct {
	name   string
	method string            // GET when empty
	hdr    map[string]string // request headers
	lines  map[string][]string
	status int
	// for 206: the inclusive range served; for 200: the whole object.
	first, last int64
}

// rangeCases are the Range forms, valid and not, against an object of
// size bytes whose ETag is tag and Last-Modified is lm.
func rangeCases(size int64, tag, lm string) []rangeCase {
	whole := func(name, rng string) rangeCase {
		return rangeCase{name: name, hdr: map[string]string{"Range": rng}, status: http.StatusOK, first: 0, last: size - 1}
	}
	part := func(name, rng string, first, last int64) rangeCase {
		return rangeCase{name: name, hdr: map[string]string{"Range": rng}, status: http.StatusPartialContent, first: first, last: last}
	}
	unsat := func(name, rng string) rangeCase {
		return rangeCase{name: name, hdr: map[string]string{"Range": rng}, status: http.StatusRequestedRangeNotSatisfiable}
	}
	n := strconv.FormatInt(size, 10)
	return []rangeCase{
		// Satisfiable: 206, clamped to the object.
		part("int-range", "bytes=10-19", 10, 19),
		part("open int-range", "bytes=100-", 100, size-1),
		part("whole as a range", "bytes=0-", 0, size-1),
		part("suffix", "bytes=-16", size-16, size-1),
		part("suffix of the whole object", "bytes=-"+n, 0, size-1),
		part("suffix longer than the object", "bytes=-"+strconv.FormatInt(size+1000, 10), 0, size-1),
		part("suffix past int64", "bytes=-99999999999999999999999", 0, size-1),
		part("last byte", fmt.Sprintf("bytes=%d-%d", size-1, size-1), size-1, size-1),
		part("end past the length is clamped", "bytes=5-"+strconv.FormatInt(size+5, 10), 5, size-1),
		part("end past int64 is clamped", "bytes=5-99999999999999999999999", 5, size-1),
		part("leading zeros", "bytes=007-0009", 7, 9),
		part("unit is case-insensitive", "Bytes=0-9", 0, 9),
		part("empty list elements", "bytes=,0-9,", 0, 9),
		part("OWS after a comma", "bytes=, 0-9", 0, 9),

		// Valid bytes ranges that select nothing: 416, bytes */length.
		unsat("suffix-length 0", "bytes=-0"),
		unsat("suffix-length 00", "bytes=-00"),
		unsat("first-pos at the length", "bytes="+n+"-"),
		unsat("first-pos past the length", "bytes="+strconv.FormatInt(size+10, 10)+"-"+strconv.FormatInt(size+20, 10)),
		unsat("first-pos past int64", "bytes=99999999999999999999999-"),

		// Invalid ranges-specifier or unknown unit: ignored, 200 whole.
		whole("not a range", "bytes=abc"),
		whole("last before first", "bytes=5-2"),
		whole("unknown unit", "items=0-10"),
		whole("no unit", "0-10"),
		whole("empty set", "bytes="),
		whole("only commas", "bytes=,,"),
		whole("no positions", "bytes=-"),
		whole("two dashes", "bytes=1-2-3"),
		whole("negative suffix", "bytes=--5"),
		whole("sign", "bytes=+1-5"),
		whole("space inside a spec", "bytes=0 -9"),
		whole("OWS before the first spec", "bytes= 0-9"),
		whole("hex", "bytes=0x0-0x9"),
		// More than one range: ignored, as Amazon S3 does (no multipart).
		whole("two ranges", "bytes=0-1,4-5"),
		whole("two unsatisfiable ranges", "bytes="+n+"-,-0"),
		whole("a valid and an invalid range", "bytes=0-1,abc"),
		{name: "two Range lines", lines: map[string][]string{"Range": {"bytes=0-1", "bytes=2-3"}}, status: http.StatusOK, first: 0, last: size - 1},

		// HEAD answers GET's status and headers, without a body.
		{name: "HEAD range", method: http.MethodHead, hdr: map[string]string{"Range": "bytes=10-19"}, status: http.StatusPartialContent, first: 10, last: 19},
		{name: "HEAD unsatisfiable", method: http.MethodHead, hdr: map[string]string{"Range": "bytes=-0"}, status: http.StatusRequestedRangeNotSatisfiable},
		{name: "HEAD invalid", method: http.MethodHead, hdr: map[string]string{"Range": "bytes=abc"}, status: http.StatusOK, first: 0, last: size - 1},

		// If-Range (RFC 9110 §13.1.5): a strong match applies the range,
		// anything else serves the whole object.
		{name: "If-Range etag matches", hdr: map[string]string{"Range": "bytes=10-19", "If-Range": tag}, status: http.StatusPartialContent, first: 10, last: 19},
		{name: "If-Range etag differs", hdr: map[string]string{"Range": "bytes=10-19", "If-Range": `"other"`}, status: http.StatusOK, first: 0, last: size - 1},
		{name: "If-Range weak etag", hdr: map[string]string{"Range": "bytes=10-19", "If-Range": "W/" + tag}, status: http.StatusOK, first: 0, last: size - 1},
		{name: "If-Range date matches", hdr: map[string]string{"Range": "bytes=10-19", "If-Range": lm}, status: http.StatusPartialContent, first: 10, last: 19},
		{name: "If-Range date differs", hdr: map[string]string{"Range": "bytes=10-19", "If-Range": "Mon, 02 Jan 2006 15:04:05 GMT"}, status: http.StatusOK, first: 0, last: size - 1},
		{name: "If-Range differs, unsatisfiable range", hdr: map[string]string{"Range": "bytes=-0", "If-Range": `"other"`}, status: http.StatusOK, first: 0, last: size - 1},
		{name: "If-Range matches, unsatisfiable range", hdr: map[string]string{"Range": "bytes=-0", "If-Range": tag}, status: http.StatusRequestedRangeNotSatisfiable},

		// Preconditions come before Range (RFC 9110 §13.2.2).
		{name: "If-Match fails before 416", hdr: map[string]string{"Range": "bytes=-0", "If-Match": `"other"`}, status: http.StatusPreconditionFailed},
		{name: "If-Match holds", hdr: map[string]string{"Range": "bytes=10-19", "If-Match": `"other", ` + tag}, status: http.StatusPartialContent, first: 10, last: 19},
		{name: "If-Match weak never matches", hdr: map[string]string{"If-Match": "W/" + tag}, status: http.StatusPreconditionFailed},
		{name: "If-Match *", hdr: map[string]string{"If-Match": "*"}, status: http.StatusOK, first: 0, last: size - 1},
		{name: "If-None-Match before 416", hdr: map[string]string{"Range": "bytes=-0", "If-None-Match": tag}, status: http.StatusNotModified},
		{name: "If-None-Match weak matches", hdr: map[string]string{"If-None-Match": "W/" + tag}, status: http.StatusNotModified},
		{name: "If-None-Match *", hdr: map[string]string{"If-None-Match": "*"}, status: http.StatusNotModified},
		{name: "If-None-Match in a second line", lines: map[string][]string{"If-None-Match": {`"other"`, tag}}, status: http.StatusNotModified},
		{name: "If-Match in a second line", lines: map[string][]string{"If-Match": {`"other"`, tag}}, status: http.StatusOK, first: 0, last: size - 1},
		{name: "If-None-Match differs", hdr: map[string]string{"If-None-Match": `"other"`, "Range": "bytes=0-0"}, status: http.StatusPartialContent, first: 0, last: 0},
		{name: "If-Modified-Since at Last-Modified", hdr: map[string]string{"If-Modified-Since": lm}, status: http.StatusNotModified},
		{name: "If-Modified-Since ignored with If-None-Match", hdr: map[string]string{"If-Modified-Since": lm, "If-None-Match": `"other"`}, status: http.StatusOK, first: 0, last: size - 1},
		{name: "If-Unmodified-Since before Last-Modified", hdr: map[string]string{"If-Unmodified-Since": "Mon, 02 Jan 2006 15:04:05 GMT"}, status: http.StatusPreconditionFailed},
	}
}

// checkRanges sends every case to url, an object holding want.
func checkRanges(t *testing.T, url string, want []byte, lm string) {
	t.Helper()
	size := int64(len(want))
	tag := etag(want)
	for _, c := range rangeCases(size, tag, lm) {
		t.Run(c.name, func(t *testing.T) {
			method := c.method
			if method == "" {
				method = http.MethodGet
			}
			req, err := http.NewRequest(method, url, nil)
			require.NoError(t, err)
			for k, v := range c.hdr {
				req.Header.Set(k, v)
			}
			for k, vs := range c.lines {
				for _, v := range vs {
					req.Header.Add(k, v)
				}
			}
			resp, body := testkit.Send(t, req)
			require.Equal(t, c.status, resp.StatusCode, "%v %v: %.200s", c.hdr, c.lines, body)
			switch c.status {
			case http.StatusOK, http.StatusPartialContent:
				part := want[c.first : c.last+1]
				require.Equal(t, strconv.Itoa(len(part)), resp.Header.Get("Content-Length"))
				require.Equal(t, "bytes", resp.Header.Get("Accept-Ranges"))
				require.Equal(t, tag, resp.Header.Get("ETag"))
				if c.status == http.StatusPartialContent {
					require.Equal(t, fmt.Sprintf("bytes %d-%d/%d", c.first, c.last, size), resp.Header.Get("Content-Range"))
				} else {
					require.Empty(t, resp.Header.Get("Content-Range"))
				}
				if method == http.MethodHead {
					require.Empty(t, body)
				} else {
					require.Equal(t, part, body)
				}
			case http.StatusRequestedRangeNotSatisfiable:
				require.Equal(t, fmt.Sprintf("bytes */%d", size), resp.Header.Get("Content-Range"))
				require.Equal(t, "application/xml", resp.Header.Get("Content-Type"))
				if method == http.MethodGet {
					require.Equal(t, "InvalidRange", parseS3Error(t, body).Code)
				}
			case http.StatusPreconditionFailed:
				require.Equal(t, "PreconditionFailed", parseS3Error(t, body).Code)
			case http.StatusNotModified:
				require.Empty(t, body)
				require.Equal(t, tag, resp.Header.Get("ETag"))
			}
		})
	}
}

// TestRanges checks RFC 9110 §14 range handling and the conditionals that
// govern it, through real HTTP, for a data file (built, then cached), a
// metadata file, and a data file read through a node that forwards it to
// its owner.
func TestRanges(t *testing.T) {
	pool, _ := pgtest.Pool(t)
	tid := insertTable(t, pool, "demo", "quakes")
	metaKey := "demo/quakes/metadata/snap-1-1-abc.avro"
	meta := content(41, 69848)
	insertMetadataFile(t, pool, tid, metaKey, meta)

	ha := &lateHandler{}
	tsA := httptest.NewServer(ha)
	defer tsA.Close()
	hb := &lateHandler{}
	tsB := httptest.NewServer(hb)
	defer tsB.Close()
	members := []cluster.Member{
		{ID: "a", AdvertiseURL: tsA.URL, Roles: []string{cluster.RoleServer}},
		{ID: "b", AdvertiseURL: tsB.URL, Roles: []string{cluster.RoleServer}},
	}
	view := func() []cluster.Member { return members }
	b := newFakeBuilder()
	newServer := func(id string, h *lateHandler) *objects.Server {
		insertTable(t, pool, "demo", "quakes")
		s, err := objects.New(objects.Config{NodeID: id, CacheDir: t.TempDir(), ForwardHeaderTimeout: time.Minute, Auth: auth.ModeNone, ForwardKey: forwardKey}, pool, b, view)
		require.NoError(t, err)
		t.Cleanup(s.Close)
		var hh http.Handler = s
		h.h.Store(&hh)
		return s
	}
	sa, sb := newServer("a", ha), newServer("b", hb)

	keyA := ownedBy(t, members, "a", 0)
	dataA := content(42, 69848)
	b.add(keyA, dataA)
	keyB := ownedBy(t, members, "b", 0)
	dataB := content(43, 10000)
	b.add(keyB, dataB)
	lm := dataFileLastModified

	t.Run("data file", func(t *testing.T) {
		// The first read builds the file, the others read the cache.
		checkRanges(t, tsA.URL+"/mink/"+keyA, dataA, lm)
		require.Equal(t, 1, flushedStats(sa).Files)
	})
	t.Run("metadata file", func(t *testing.T) {
		resp, _ := do(t, http.MethodHead, tsA.URL+"/mink/"+metaKey, nil)
		checkRanges(t, tsA.URL+"/mink/"+metaKey, meta, resp.Header.Get("Last-Modified"))
	})
	t.Run("forwarded", func(t *testing.T) {
		checkRanges(t, tsA.URL+"/mink/"+keyB, dataB, lm)
		require.Equal(t, 1, flushedStats(sa).Files, "a kept no copy of b's file")
		require.Equal(t, 1, flushedStats(sb).Files)
		require.EqualValues(t, len(rangeCases(1, "", "")), flushedStats(sa).Forwards, "every read went to b")
	})
}

// dataFileLastModified is the fixed Last-Modified of every data file.
const dataFileLastModified = "Mon, 01 Jan 2024 00:00:00 GMT"
