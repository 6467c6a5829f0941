package writer

import (
	"crypto/sha256"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/commit"
	"github.com/minkhq/mink/datafile"
	"github.com/minkhq/mink/tables"
)

// TestPlanRewrite: what expiry does with each file it reads (docs/design.md
// §4.6), and the operation of its snapshot.
func TestPlanRewrite(t *testing.T) {
	file := func(records int64, b string) *datafile.File {
		return &datafile.File{Bytes: []byte(b), SHA256: sha256.Sum256([]byte(b)), Stats: datafile.Stats{RecordCount: records}}
	}
	same := file(10, "same bytes")
	live := func(key string, start, end, logStart int64, version int, f *datafile.File, records int64) expiringFile {
		return expiringFile{key: key, partition: 0, start: start, end: end, logStart: logStart, version: version,
			size: int64(len(f.Bytes)), sum: f.SHA256[:], records: records}
	}
	tbl := &tables.Table{Location: "s3://wh/ns/t"}

	t.Run("below the log start: removed without a rebuild", func(t *testing.T) {
		f := live("a", 0, 100, 100, datafile.EncoderVersion, same, 100)
		start, ok := f.rebuildStart()
		require.False(t, ok)
		require.Zero(t, start)
		rp := planRewrite([]expiringFile{f}, map[string]*commit.TailFile{})
		require.Equal(t, []string{"a"}, rp.remove)
		require.Empty(t, rp.add)
		require.Equal(t, "delete", rp.change(tbl).Op)
	})
	t.Run("across the log start: rebuilt from it", func(t *testing.T) {
		f := live("a", 0, 100, 40, datafile.EncoderVersion, same, 100)
		start, ok := f.rebuildStart()
		require.True(t, ok)
		require.Equal(t, int64(40), start)
		rp := planRewrite([]expiringFile{f}, map[string]*commit.TailFile{"a": {File: file(60, "from 40")}})
		require.Equal(t, []string{"a"}, rp.remove)
		require.Len(t, rp.add, 1)
		require.Equal(t, [2]int64{40, 100}, [2]int64{rp.add[0].Start, rp.add[0].End})
		c := rp.change(tbl)
		require.Equal(t, "overwrite", c.Op)
		require.False(t, c.Replace)
		require.Equal(t, "s3://wh/"+tbl.DataFileKey(0, 40, 100, datafile.EncoderVersion), c.Added[0].Path)
	})
	t.Run("marked, and the rebuild matches again: mark cleared", func(t *testing.T) {
		f := live("a", 0, 100, 0, datafile.EncoderVersion, same, 10)
		f.needsRebuild = true
		rp := planRewrite([]expiringFile{f}, map[string]*commit.TailFile{"a": {File: same}})
		require.Empty(t, rp.remove)
		require.Equal(t, []string{"a"}, rp.rebuilt)
	})
	t.Run("another encoder version: re-encoded, same rows", func(t *testing.T) {
		f := live("a", 0, 100, 0, datafile.EncoderVersion-1, same, 10)
		rp := planRewrite([]expiringFile{f}, map[string]*commit.TailFile{"a": {File: same}})
		require.Equal(t, []string{"a"}, rp.remove)
		c := rp.change(tbl)
		require.True(t, c.Replace)
		require.Equal(t, "replace", c.Op)
	})
	t.Run("a rebuild without rows: only removed", func(t *testing.T) {
		f := live("a", 0, 100, 0, datafile.EncoderVersion, same, 10)
		rp := planRewrite([]expiringFile{f}, map[string]*commit.TailFile{})
		require.Equal(t, []string{"a"}, rp.remove)
		require.Empty(t, rp.add)
		require.Equal(t, "delete", rp.change(tbl).Op)
	})
}
