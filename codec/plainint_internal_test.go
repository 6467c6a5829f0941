package codec

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestPlainInt: plainInt gives what scanNumber and integer give (value,
// end position) for the literals it takes, and declines the others
// (leaving the position), over plain, signed, long, leading-zero,
// fractional, exponent and malformed literals with various followers.
func TestPlainInt(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 6))
	lits := []string{"0", "-0", "7", "-7", "10", "2147483647", "2147483648", "-2147483648", "-2147483649",
		"999999999999999999", "1000000000000000000", "9223372036854775807", "-9223372036854775808", "9223372036854775808",
		"01", "-01", "00", "-", "1.5", "1.0", "2e3", "2E3", "1e", "12345678901234567890123"}
	for range 2000 {
		lits = append(lits, fmt.Sprint(rnd.Int64()>>uint(rnd.IntN(64))), fmt.Sprint(-rnd.Int64()>>uint(rnd.IntN(64))))
	}
	for _, lit := range lits {
		for _, follow := range []string{"", ",", "}", " ", "x", "]"} {
			for _, bits32 := range []bool{false, true} {
				in := []byte(lit + follow)
				p := jsonParser{in: in}
				v, ok := p.plainInt(bits32)
				if !ok {
					if p.pos != 0 {
						t.Fatalf("%q: declined but moved to %d", in, p.pos)
					}
					continue
				}
				q := jsonParser{in: in}
				num, err := q.scanNumber()
				if err != nil {
					t.Fatalf("%q: plainInt took it, scanNumber: %v", in, err)
				}
				bits := 64
				if bits32 {
					bits = 32
				}
				w, msg := q.integer(num, 0, bits)
				if msg != "" || w != v || q.pos != p.pos {
					t.Fatalf("%q (32 bits %v): plainInt %d at %d, general %d %q at %d", in, bits32, v, p.pos, w, msg, q.pos)
				}
			}
		}
	}
	// The plain forms are taken.
	for _, lit := range []string{"0", "-7", "2176", "999999999999999999"} {
		p := jsonParser{in: []byte(lit + ",")}
		if _, ok := p.plainInt(false); !ok {
			t.Errorf("%s: declined", lit)
		}
	}
}
