// Package readable writes the numbers and times of the cluster overview
// for people, one way for `mink status` and the console (/ui): counts with
// thousands separators, bytes in binary units, times relative to the
// overview's (database) clock.
package readable

import (
	"fmt"
	"strconv"
	"time"
)

// Count is n with a thousands separator every three digits: "1,234,567".
func Count(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	out := make([]byte, 0, len(s)+len(s)/3+1)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

// Rate is a per-second rate to one decimal, with thousands separators:
// "1,234.5".
func Rate(r float64) string {
	tenths := int64(r*10 + 0.5)
	if r < 0 {
		tenths = int64(r*10 - 0.5)
	}
	whole, frac := tenths/10, tenths%10
	if frac < 0 {
		frac = -frac
	}
	s := Count(whole)
	if tenths < 0 && whole == 0 {
		s = "-0"
	}
	return s + "." + strconv.FormatInt(frac, 10)
}

// Bytes is n in the largest binary unit it reaches, to one decimal below
// 100 of it: "512 B", "1.5 KiB", "123 MiB".
func Bytes(n int64) string {
	const units = "KMGTPE"
	if n < 1024 && n > -1024 {
		return strconv.FormatInt(n, 10) + " B"
	}
	v, i := float64(n)/1024, 0
	for (v >= 1024 || v <= -1024) && i < len(units)-1 {
		v /= 1024
		i++
	}
	if v >= 100 || v <= -100 {
		return fmt.Sprintf("%.0f %ciB", v, units[i])
	}
	return fmt.Sprintf("%.1f %ciB", v, units[i])
}

// Duration is d, rounded to the second, in at most two units: "9s",
// "4m 05s", "3h 12m", "2d 5h".
func Duration(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	if s < 0 {
		s = -s
	}
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm %02ds", s/60, s%60)
	case s < 86400:
		return fmt.Sprintf("%dh %02dm", s/3600, s%3600/60)
	}
	return fmt.Sprintf("%dd %dh", s/86400, s%86400/3600)
}

// Until is how far ahead of now at is: "in 9s", or "expired" once it has
// passed; "-" for a zero or nil time. Both times by one clock (the
// database's, in an overview).
func Until(at *time.Time, now time.Time) string {
	if at == nil || at.IsZero() {
		return "-"
	}
	d := at.Sub(now)
	if d.Round(time.Second) < 0 {
		return "expired"
	}
	return "in " + Duration(d)
}

// Ago is how long before now at was: "5s ago"; "-" for a zero time.
func Ago(at, now time.Time) string {
	if at.IsZero() {
		return "-"
	}
	d := now.Sub(at)
	if d < 0 {
		d = 0
	}
	return Duration(d) + " ago"
}
