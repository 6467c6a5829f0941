package catalog

import (
	"net/url"
	"slices"
	"strings"
	"testing"
)

// isLevel is levelName's rule without a regular expression: a namespace
// level is 1 or more of A-Z a-z 0-9 _ -.
func isLevel(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// FuzzNamespace checks parseNamespace and the paging token against
// independent readings of their rules (Iceberg REST spec: multipart
// namespaces joined by the unit separator 0x1F, %1F in a URL; Mink also
// accepts "."):
//   - parseNamespace accepts exactly the strings whose levels, split at
//     0x1F and ".", are all names, and returns those levels;
//   - a parsed namespace encodes back (joined by 0x1F, then escaped as a
//     path segment and as ?parent= are) to a string that parses to the same
//     levels;
//   - a page token decodes to a table name only, and the token cut makes
//     of that name decodes back to it.
func FuzzNamespace(f *testing.F) {
	for _, s := range []string{"a", "a\x1fb", "a.b", "a\x1fb.c", "", ".", "a..b", "a\x1f", "\x1fa", "a b", "a/b", "ü", "a\x1f\x1fb",
		"db_1\x1fraw-2", "a~dlq", "%1F"} {
		f.Add(s, "", "")
	}
	f.Add("a", "dDE", "10")     // base64url("t1")
	f.Add("a", "dDF-ZGxx", "1") // base64url("t1~dlq")
	f.Add("a", "=", "0")
	f.Add("a", "dDE=", "-1")
	f.Add("a", "Lw", "99999999999999999999")
	f.Fuzz(func(t *testing.T, s, token, size string) {
		ns, ok := parseNamespace(s)
		levels := splitAny(s)
		want := len(levels) > 0 && !slices.ContainsFunc(levels, func(l string) bool { return !isLevel(l) })
		if ok != want {
			t.Fatalf("parseNamespace(%q) ok=%v, levels %q", s, ok, levels)
		}
		if ok {
			if !slices.Equal(ns, levels) {
				t.Fatalf("parseNamespace(%q) = %q, want %q", s, ns, levels)
			}
			joined := strings.Join(ns, "\x1f")
			for _, enc := range []string{joined, strings.Join(ns, ".")} {
				if back, ok := parseNamespace(enc); !ok || !slices.Equal(back, ns) {
					t.Fatalf("%q → %q → %q", s, enc, back)
				}
			}
			seg, err := url.PathUnescape(url.PathEscape(joined))
			if err != nil || seg != joined {
				t.Fatalf("path segment of %q: %q, %v", joined, seg, err)
			}
			q, err := url.ParseQuery(url.Values{"parent": {joined}}.Encode())
			if err != nil || q.Get("parent") != joined {
				t.Fatalf("?parent= of %q: %q, %v", joined, q.Get("parent"), err)
			}
		}

		q := url.Values{"pageToken": {token}}
		if size != "" {
			q.Set("pageSize", size)
		}
		p, err := parsePage(q)
		if err != nil {
			return
		}
		if p.size < 1 || p.size > MaxPageSize {
			t.Fatalf("page size %d from %q", p.size, size)
		}
		if p.after != "" {
			if !tableName.MatchString(p.after) {
				t.Fatalf("token %q decodes to %q, not a table name", token, p.after)
			}
			names, next := page{on: true, size: 1}.cut([]string{p.after, "zz"})
			if len(names) != 1 || next == nil {
				t.Fatalf("cut: %q %v", names, next)
			}
			p2, err := parsePage(url.Values{"pageToken": {*next}})
			if err != nil || p2.after != p.after {
				t.Fatalf("token of %q: %q decodes to %q, %v", p.after, *next, p2.after, err)
			}
		}
	})
}

// splitAny splits s at every 0x1F and '.' byte, keeping empty pieces.
func splitAny(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1f || s[i] == '.' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}
