package tables

import (
	"math/rand"
	"path"
	"strings"
	"testing"
)

// TestMatchGroupReference compares matchGroup with a reference over
// random patterns and names of a small ASCII alphabet: path.Match after
// '/' became '0' in both. No other character of the alphabet is '0' and
// none lies between '/' and '0', so ranges keep what they cover, and
// path.Match's '*' and '?' stop at no '0': the reference is path.Match
// with '/' an ordinary character.
func TestMatchGroupReference(t *testing.T) {
	patternChars := []string{"a", "b", "/", "*", "?", "[", "]", "^", "-", `\`, "."}
	nameChars := []string{"a", "b", "/", "-", "."}
	r := rand.New(rand.NewSource(1))
	random := func(chars []string, n int) string {
		var b strings.Builder
		for range r.Intn(n) + 1 {
			b.WriteString(chars[r.Intn(len(chars))])
		}
		return b.String()
	}
	for range 100000 {
		p, g := random(patternChars, 7), random(nameChars, 6)
		want, wantErr := path.Match(strings.ReplaceAll(p, "/", "0"), strings.ReplaceAll(g, "/", "0"))
		got, err := matchGroup(p, g)
		if got != want || (err != nil) != (wantErr != nil) {
			t.Fatalf("pattern %q, group %q: got %v, %v; want %v, %v", p, g, got, err, want, wantErr)
		}
	}
}
