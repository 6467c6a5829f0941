package tables

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDataFileKeys(t *testing.T) {
	tbl := &Table{Location: "s3://mink/a/b/events~dlq"}
	key := tbl.DataFileKey(3, 100, 250, 1)
	require.Equal(t, "a/b/events~dlq/data/3/100-250-1.parquet", key)
	ref, ok := ParseDataFileKey(key)
	require.True(t, ok)
	require.Equal(t, DataFileRef{TableKey: "a/b/events~dlq", Partition: 3, Start: 100, End: 250, Version: 1}, ref)
	for _, bad := range []string{"a/b/metadata/x.json", "a/data/x/1-2-1.parquet", "a/data/1/1-2.parquet", "a/data/1/1-2-1.avro", "data/1/1-2-1.parquet"} {
		_, ok := ParseDataFileKey(bad)
		require.False(t, ok, bad)
	}
	require.Equal(t, "a/b/events/metadata/00000-x.metadata.json", Key("s3://mink/a/b/events/metadata/00000-x.metadata.json"))
	ns, name, err := ParseName("a.b.events")
	require.NoError(t, err)
	require.Equal(t, []string{"a.b", "events"}, []string{ns, name})
	_, _, err = ParseName("events")
	require.ErrorIs(t, err, ErrBadName)
}
