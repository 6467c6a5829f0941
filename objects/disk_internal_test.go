package objects

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEvictWhileReading: a file evicted while a reader has it open is
// still read to the end.
func TestEvictWhileReading(t *testing.T) {
	dir := t.TempDir()
	// Leftovers of a previous run are cleared; foreign files are kept.
	stale := filepath.Join(dir, cacheName("old"))
	require.NoError(t, os.WriteFile(stale, []byte("x"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, putTempPrefix+"1"), []byte("x"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "README"), []byte("x"), 0o644))
	c, err := newDiskCache(dir, 10)
	require.NoError(t, err)
	des, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, des, 1)
	require.Equal(t, "README", des[0].Name())

	a := []byte("0123456789")
	_, _, err = c.put("a", a, "ea")
	require.NoError(t, err)
	cf, ok := c.open("a")
	require.True(t, ok)
	defer cf.f.Close()
	head := make([]byte, 3)
	_, err = io.ReadFull(cf.f, head)
	require.NoError(t, err)

	stored, evicted, err := c.put("b", []byte("abcdefgh"), "eb")
	require.NoError(t, err)
	require.True(t, stored)
	require.Equal(t, 1, evicted)
	_, ok = c.open("a")
	require.False(t, ok)
	_, err = os.Stat(filepath.Join(dir, cacheName("a")))
	require.True(t, os.IsNotExist(err), "evicted file is unlinked")

	rest, err := io.ReadAll(cf.f)
	require.NoError(t, err)
	require.Equal(t, a, append(head, rest...))

	// Replacing a file while it is read keeps the reader on its bytes.
	cb, ok := c.open("b")
	require.True(t, ok)
	defer cb.f.Close()
	_, _, err = c.put("b", []byte("ABCDEFGH"), "eb2")
	require.NoError(t, err)
	got, err := io.ReadAll(cb.f)
	require.NoError(t, err)
	require.True(t, bytes.Equal([]byte("abcdefgh"), got))
	files, n := c.usage()
	require.Equal(t, 1, files)
	require.EqualValues(t, 8, n)
}

func TestClassify(t *testing.T) {
	for key, want := range map[string]objectKind{
		"demo/quakes/metadata/00001-x.metadata.json": kindMetadata,
		"a/b/c/quakes/metadata/snap-1.avro":          kindMetadata,
		"demo/quakes/data/0/0-100-1.parquet":         kindData,
		"demo/quakes~dlq/data/12/100-200-1.parquet":  kindData,
		"a/b/quakes/data/3/0-1-1.parquet":            kindData,
		"quakes/metadata/x.json":                     kindNone,
		"quakes/data/0/0-1-1.parquet":                kindNone,
		"demo/quakes/data/p/0-1-1.parquet":           kindNone,
		"demo/quakes/data/0/0-1-1.csv":               kindNone,
		"demo//quakes/metadata/x.json":               kindNone,
		"demo/../metadata/x.json":                    kindNone,
		"demo/quakes/other/x":                        kindNone,
		"demo/quakes/metadata/":                      kindNone,
	} {
		require.Equal(t, want, classify(key), key)
	}
}
