package testkit

import (
	"bytes"
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/stretchr/testify/require"
)

// ReadParquet reads the Parquet file b whole with arrow-go's reader (a
// reader nobody here wrote) and returns it as a table, which the caller
// releases.
func ReadParquet(t testing.TB, b []byte) arrow.Table {
	t.Helper()
	pr, err := file.NewParquetReader(bytes.NewReader(b))
	require.NoError(t, err)
	defer pr.Close()
	fr, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	require.NoError(t, err)
	tbl, err := fr.ReadTable(context.Background())
	require.NoError(t, err)
	return tbl
}
