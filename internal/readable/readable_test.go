package readable

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestCount(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 7: "7", 999: "999", 1000: "1,000", 123456: "123,456",
		1234567: "1,234,567", -1234: "-1,234", -999: "-999"} {
		require.Equal(t, want, Count(n), n)
	}
}

func TestRate(t *testing.T) {
	for r, want := range map[float64]string{0: "0.0", 12.5: "12.5", 1234.56: "1,234.6", 0.04: "0.0", -0.5: "-0.5", -1234.5: "-1,234.5"} {
		require.Equal(t, want, Rate(r), r)
	}
}

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB",
		5 << 20: "5.0 MiB", 123 << 20: "123 MiB", 3 << 40: "3.0 TiB"} {
		require.Equal(t, want, Bytes(n), n)
	}
}

func TestTimes(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { x := now.Add(d); return &x }
	require.Equal(t, "in 9s", Until(at(9400*time.Millisecond), now))
	require.Equal(t, "in 0s", Until(at(-400*time.Millisecond), now))
	require.Equal(t, "expired", Until(at(-2*time.Second), now))
	require.Equal(t, "-", Until(nil, now))
	require.Equal(t, "4m 05s ago", Ago(*at(-245 * time.Second), now))
	require.Equal(t, "3h 12m ago", Ago(*at(-(3*time.Hour + 12*time.Minute)), now))
	require.Equal(t, "2d 5h ago", Ago(*at(-(53 * time.Hour)), now))
	require.Equal(t, "0s ago", Ago(*at(time.Second), now))
	require.Equal(t, "-", Ago(time.Time{}, now))
}
