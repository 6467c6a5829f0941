package codec

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// foldName agrees with strings.EqualFold: two names fold to the same bytes
// exactly when EqualFold says they are equal. Checked for every rune and
// each member of its folding orbit, against every rune of the orbit and
// its neighbours.
func TestFoldNameIsEqualFold(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		a := string(r)
		others := []rune{r + 1, unicode.ToUpper(r), unicode.ToLower(r), unicode.ToTitle(r)}
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			others = append(others, f)
		}
		for _, o := range others {
			if !utf8.ValidRune(o) {
				continue
			}
			b := string(o)
			same := string(foldName(nil, []byte(a))) == string(foldName(nil, []byte(b)))
			if same != strings.EqualFold(a, b) {
				t.Fatalf("%U %U: folded equal %v, EqualFold %v", r, o, same, strings.EqualFold(a, b))
			}
		}
	}
	if got := string(foldName(nil, []byte("Vbeln_ǅ-Straße"))); got != string(foldName(nil, []byte("VBELN_ǆ-STRAẞE"))) {
		t.Fatalf("mixed string folds to %q", got)
	}
}
