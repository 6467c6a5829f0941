package codec

import (
	"testing"
	"time"
)

// TestDaysFromCivil: the day count of every date of years 0000–9999 (all
// that YYYY-MM-DD can write) and the month lengths equal Go's time package
// (proleptic Gregorian calendar).
func TestDaysFromCivil(t *testing.T) {
	for y := 0; y <= 9999; y++ {
		for m := 1; m <= 12; m++ {
			if got, want := daysIn(y, m), time.Date(y, time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day(); got != want {
				t.Fatalf("daysIn(%d, %d) = %d, want %d", y, m, got, want)
			}
			for _, d := range []int{1, 15, daysIn(y, m)} {
				if got, want := daysFromCivil(y, m, d), time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC).Unix()/86400; got != want {
					t.Fatalf("daysFromCivil(%d, %d, %d) = %d, want %d", y, m, d, got, want)
				}
			}
		}
	}
}
