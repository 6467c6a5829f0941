package tables

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDataFileKeyGenerations(t *testing.T) {
	tbl := &Table{Location: "s3://mink/a/events"}
	require.Equal(t, tbl.DataFileKey(1, 5, 9, 1), tbl.DataFileKeyGen(1, 5, 9, 1, 0))
	key := tbl.DataFileKeyGen(1, 5, 9, 1, 2)
	require.Equal(t, "a/events/data/1/5-9-1-g2.parquet", key)
	ref, ok := ParseDataFileKey(key)
	require.True(t, ok)
	require.Equal(t, DataFileRef{TableKey: "a/events", Partition: 1, Start: 5, End: 9, Version: 1, Generation: 2}, ref)
	for _, bad := range []string{"a/data/1/5-9-1-g0.parquet", "a/data/1/5-9-1-g.parquet", "a/data/1/5-9-1-x2.parquet", "a/data/1/5-9-1-g02.parquet", "a/data/1/5-9-1-2.parquet"} {
		_, ok := ParseDataFileKey(bad)
		require.False(t, ok, bad)
	}
}
