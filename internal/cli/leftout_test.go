package cli

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLeftOut(t *testing.T) {
	require.Empty(t, leftOut(20, 20, true))
	require.Equal(t, "mink scan: 1 of 2 rows printed; 1 more row left out: use --limit 0 for all, or --limit N", leftOut(1, 2, true))
	require.Equal(t, "mink scan: 1,000 of 1,234,567 rows printed; 1,233,567 more rows at most (some may be deleted) left out: use --limit 0 for all, or --limit N",
		leftOut(1000, 1234567, false))
}
