package objects

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// longNumber is a run of digits past what strconv.ParseInt reads: readRange
// saturates it (RFC 9110: positions have no upper bound) where net/http
// refuses the whole field.
var longNumber = regexp.MustCompile(`[0-9]{19,}`)

// FuzzRange sends a GET with a Range field through serveContent, as the S3
// API answers every object (from memory, or from a cached file through
// sizedFile), and checks the answer against readRange and against
// net/http's own reading of the same field:
//   - never a 2xx with bytes outside the object: 200 is the whole object,
//     206 exactly the bytes of its Content-Range, inside the object;
//   - 416 answers "bytes */<size>" with an S3 XML InvalidRange error;
//   - what readRange serves as one range, http.ServeContent serves the same
//     from the raw field; what it finds unsatisfiable, so does ServeContent
//     (except suffix-length 0, which RFC 9110 §14.1.2 makes unsatisfiable
//     and ServeContent serves as an empty 206). The rest are documented
//     departures (ranges.go): a unit in another case, a set of several
//     ranges, OWS inside a spec, numbers past int64, "+" signs.
func FuzzRange(f *testing.F) {
	for _, s := range []string{
		"bytes=0-0", "bytes=10-19", "bytes=100-", "bytes=-16", "bytes=-0", "bytes=-00", "bytes=5-2", "Bytes=0-9",
		"bytes=,0-9,", "bytes=, 0-9", "bytes= 0-9", "bytes=0 -9", "bytes=+1-5", "bytes=--5", "bytes=0x0-0x9",
		"bytes=0-1,4-5", "bytes=99999999999999999999999-", "bytes=-99999999999999999999999", "bytes=5-99999999999999999999999",
		"bytes=1-2-3", "bytes=", "bytes=-", "items=0-10", "0-10", "bytes=\t0-9", "bytes=0-9\t,", "bytes=007-0009",
	} {
		f.Add(s, uint16(100), false, false)
	}
	f.Add("bytes=0-", uint16(0), false, false)
	f.Add("bytes=0-0", uint16(1), true, false)
	f.Add("bytes=69847-", uint16(69848%65536), false, true)
	f.Add("bytes=0-1", uint16(10), false, true)

	s := &Server{cfg: Config{}.WithDefaults()}
	var err error
	if s.metrics, err = newMetrics(s, prometheus.NewRegistry()); err != nil {
		f.Fatal(err)
	}
	dir := f.TempDir()
	modTime := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, rng string, size uint16, file, twice bool) {
		n := int64(size)
		content := make([]byte, n)
		for i := range content {
			content[i] = byte(i*7 + i>>8)
		}
		req := httptest.NewRequest(http.MethodGet, "/mink/a/t/data/0/0-1-1.parquet", nil)
		req.Header["Range"] = []string{rng}
		if twice {
			req.Header["Range"] = []string{rng, rng}
		}
		before := req.Header.Clone()
		rec := httptest.NewRecorder()
		var body io.ReadSeeker = bytes.NewReader(content)
		if file {
			path := filepath.Join(dir, "f")
			if err := os.WriteFile(path, content, 0o600); err != nil {
				t.Fatal(err)
			}
			fh, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer fh.Close()
			body = &sizedFile{f: fh, size: n}
		}
		s.serveContent(rec, req, "a/t/data/0/0-1-1.parquet", sourceCache, contentTypeBinary, modTime, `"e"`, body, n)
		if fmt.Sprint(before) != fmt.Sprint(req.Header) {
			t.Fatalf("the request's headers changed: %v → %v", before, req.Header)
		}

		answer, first, last := readRange(req.Header.Values("Range"), n)
		got := rec.Result()
		gotBody := rec.Body.Bytes()
		cr := got.Header.Get("Content-Range")
		switch answer {
		case rangeWhole:
			if got.StatusCode != http.StatusOK || !bytes.Equal(gotBody, content) || cr != "" {
				t.Fatalf("Range %q on %d bytes: want 200 with the whole object, got %d, %d bytes, Content-Range %q",
					rng, n, got.StatusCode, len(gotBody), cr)
			}
		case rangeOne:
			if first < 0 || first > last || last >= n {
				t.Fatalf("Range %q on %d bytes: range %d-%d outside the object", rng, n, first, last)
			}
			want := fmt.Sprintf("bytes %d-%d/%d", first, last, n)
			if got.StatusCode != http.StatusPartialContent || cr != want || !bytes.Equal(gotBody, content[first:last+1]) {
				t.Fatalf("Range %q on %d bytes: want 206 %s, got %d %q with %d bytes", rng, n, want, got.StatusCode, cr, len(gotBody))
			}
		case rangeUnsatisfiable:
			var e struct {
				Code string `xml:"Code"`
			}
			if got.StatusCode != http.StatusRequestedRangeNotSatisfiable || cr != fmt.Sprintf("bytes */%d", n) ||
				xml.Unmarshal(gotBody, &e) != nil || e.Code != codeInvalidRange {
				t.Fatalf("Range %q on %d bytes: want 416 InvalidRange, got %d %q %q", rng, n, got.StatusCode, cr, gotBody)
			}
		}

		// net/http's reading of the raw field, where both read the same
		// grammar.
		if twice || !strings.HasPrefix(rng, "bytes=") || longNumber.MatchString(rng) || answer == rangeWhole {
			return
		}
		theirs := httptest.NewRecorder()
		http.ServeContent(theirs, req, "", modTime, bytes.NewReader(content))
		tr := theirs.Result()
		switch {
		case answer == rangeOne && (tr.StatusCode != got.StatusCode || tr.Header.Get("Content-Range") != cr || !bytes.Equal(theirs.Body.Bytes(), gotBody)):
			t.Fatalf("Range %q on %d bytes: we serve %s, net/http %d %q", rng, n, cr, tr.StatusCode, tr.Header.Get("Content-Range"))
		case answer == rangeUnsatisfiable && tr.StatusCode != http.StatusRequestedRangeNotSatisfiable && !zeroSuffix(rng):
			t.Fatalf("Range %q on %d bytes: unsatisfiable here, net/http answers %d", rng, n, tr.StatusCode)
		}
	})
}

// zeroSuffix reports whether rng's one range is a suffix-range of length 0.
func zeroSuffix(rng string) bool {
	spec := strings.Trim(strings.TrimPrefix(rng, "bytes="), ", \t")
	return strings.HasPrefix(spec, "-") && strings.Trim(spec[1:], "0") == ""
}
