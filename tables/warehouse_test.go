package tables_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/tables"
)

// A warehouse is an S3 bucket name that no route of the node has as its
// first path segment.
func TestCheckWarehouse(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"mink", "lake-01", "my.lake", "Legacy_WH", "abc"} {
		require.NoError(t, tables.CheckWarehouse(ok), ok)
	}
	for _, bad := range []string{"", ".", "..", "a/b", "v1", "ui", "admin", "ADMIN", "metrics", "debug", "healthz", "readyz",
		"ab", "-mink", "mink.", "a..b", "192.168.1.1", string(make([]byte, 64))} {
		require.Error(t, tables.CheckWarehouse(bad), "%q", bad)
	}
}
