package objects

import (
	"math"
	"net/http"
	"strconv"
	"strings"
)

// rangeAnswer is what a Range header asks of one representation.
type rangeAnswer int

const (
	// rangeWhole: no Range, or one the server ignores (RFC 9110 §14.2): a
	// syntactically invalid ranges-specifier, a unit other than bytes, or
	// more than one range. The answer is 200 with the whole object.
	rangeWhole rangeAnswer = iota
	// rangeOne: one satisfiable byte range; the answer is 206 (RFC 9110
	// §15.3.7) with the range clamped to the object.
	rangeOne
	// rangeUnsatisfiable: a valid bytes range that selects nothing; the
	// answer is 416 with Content-Range "bytes */<length>" (RFC 9110
	// §15.5.17).
	rangeUnsatisfiable
)

// readRange reads the Range field values of a request for a representation
// of size bytes (RFC 9110 §14.1.1, §14.1.2, §14.2). first and last are the
// inclusive byte positions of a rangeOne answer.
//
// The rules, from the RFC's grammar:
//   - range-unit is compared case-insensitively; a unit other than "bytes"
//     is ignored.
//   - int-range = first-pos "-" [ last-pos ]; it is invalid when last-pos
//     is less than first-pos (so the whole field is ignored), satisfiable
//     when first-pos < size. A last-pos at or past the end is clamped.
//   - suffix-range = "-" suffix-length; satisfiable when suffix-length > 0.
//     A suffix longer than the object selects the whole object (206).
//   - positions are 1*DIGIT of any length: a number past int64 is simply
//     larger than any object, never a syntax error.
//   - range-set = 1#range-spec: empty list elements are skipped (RFC 9110
//     §5.6.1.2); OWS is allowed only around commas, not inside a spec.
//
// Like Amazon S3, the API serves no multipart/byteranges: a set of more
// than one range is ignored (200, the whole object), which RFC 9110 §14.2
// allows ("A server MAY ignore the Range header field"). An object of zero
// bytes has no byte to send in a 206, and http.ServeContent answers a
// Range on it with 200; so it is always served whole (Mink serves no empty
// files: every metadata and Parquet file has content). The field is
// ignored when it is sent more than once.
func readRange(values []string, size int64) (answer rangeAnswer, first, last int64) {
	if len(values) != 1 || size <= 0 {
		return rangeWhole, 0, 0
	}
	unit, set, ok := strings.Cut(values[0], "=")
	if !ok || !strings.EqualFold(unit, "bytes") {
		return rangeWhole, 0, 0
	}
	var specs []string
	for i, spec := range strings.Split(set, ",") {
		spec = strings.TrimRight(spec, " \t")
		if i > 0 {
			spec = strings.TrimLeft(spec, " \t")
		}
		if spec != "" {
			specs = append(specs, spec)
		}
	}
	if len(specs) != 1 {
		return rangeWhole, 0, 0
	}
	from, to, ok := strings.Cut(specs[0], "-")
	if !ok {
		return rangeWhole, 0, 0
	}
	if from == "" { // suffix-range
		n, ok := digits(to)
		switch {
		case !ok:
			return rangeWhole, 0, 0
		case n == 0:
			return rangeUnsatisfiable, 0, 0
		}
		return rangeOne, size - min(n, size), size - 1
	}
	f, ok := digits(from)
	if !ok {
		return rangeWhole, 0, 0
	}
	l := int64(math.MaxInt64)
	if to != "" {
		if l, ok = digits(to); !ok || l < f {
			return rangeWhole, 0, 0
		}
	}
	if f >= size {
		return rangeUnsatisfiable, 0, 0
	}
	return rangeOne, f, min(l, size-1)
}

// digits parses 1*DIGIT; a value past int64 saturates at math.MaxInt64,
// which is past the end of any object.
func digits(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil { // only ErrRange is left: too many digits
		return math.MaxInt64, true
	}
	return n, true
}

// normalizeRequest returns r with the headers http.ServeContent reads put
// in the one form it handles as RFC 9110 says:
//   - Range: removed when it is to be ignored; one canonical
//     "bytes=first-last" when satisfiable; "bytes=<size>-" when
//     unsatisfiable, which ServeContent answers with 416 and Content-Range
//     "bytes */<size>" once the preconditions and If-Range hold (RFC 9110
//     §13.2.2: preconditions are evaluated before Range).
//   - If-Match and If-None-Match: list fields (RFC 9110 §5.3) that may come
//     as several field lines; ServeContent reads only the first line, so
//     the lines are joined into one.
//
// r itself is not changed: a forward to the owner sends the client's
// headers as they came. When nothing needs changing (no Range, or one
// already in the canonical form, and no conditional sent twice), r is
// returned as it is, with no copy of its headers.
func normalizeRequest(r *http.Request, size int64) *http.Request {
	ranges := r.Header.Values("Range")
	want := ""
	switch answer, first, last := readRange(ranges, size); answer {
	case rangeOne:
		want = "bytes=" + strconv.FormatInt(first, 10) + "-" + strconv.FormatInt(last, 10)
	case rangeUnsatisfiable:
		want = "bytes=" + strconv.FormatInt(size, 10) + "-"
	}
	same := want == "" && len(ranges) == 0 || len(ranges) == 1 && ranges[0] == want
	if same && len(r.Header.Values("If-Match")) <= 1 && len(r.Header.Values("If-None-Match")) <= 1 {
		return r
	}
	h := r.Header.Clone()
	if want == "" {
		h.Del("Range")
	} else {
		h.Set("Range", want)
	}
	for _, k := range []string{"If-Match", "If-None-Match"} {
		if vs := h.Values(k); len(vs) > 1 {
			h.Set(k, strings.Join(vs, ", "))
		}
	}
	r2 := new(http.Request)
	*r2 = *r
	r2.Header = h
	return r2
}
