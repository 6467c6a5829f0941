package objects

import (
	"container/list"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// diskCache keeps built data files on local disk, bounded by bytes, least
// recently used evicted first. Its index lives in memory only, so the
// directory is cleared at start.
//
// Every file operation on a cached name (open, rename into place, remove)
// happens under mu. That is what makes eviction safe for readers: a reader
// opens its file descriptor under mu, so an eviction either happens before
// (the reader sees a miss) or after (the reader holds an open descriptor,
// and on POSIX an unlinked file stays readable to the end through it). With
// the remove outside mu this interleaving would go wrong: eviction of k
// unlinks nothing yet; a Put of k renames a fresh file into place; the late
// remove then deletes the fresh file that the index says is present.
type diskCache struct {
	dir      string
	capacity int64

	mu      sync.Mutex
	entries map[string]*list.Element // key → element holding *cacheEntry
	lru     list.List                // front: most recently used
	bytes   int64
}

type cacheEntry struct {
	key  string
	name string // hex SHA-256 of key
	size int64
	etag string // quoted hex SHA-256 of the content
}

// cachedFile is an open cached data file. The caller closes f.
type cachedFile struct {
	f    *os.File
	size int64
	etag string
}

// putTempPrefix starts the names of files being written, before they are
// renamed into place.
const putTempPrefix = ".put-"

func newDiskCache(dir string, capacity int64) (*diskCache, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("objects: cache dir: %w", err)
	}
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("objects: cache dir: %w", err)
	}
	for _, de := range des {
		if n := de.Name(); de.Type().IsRegular() && (isCacheName(n) || strings.HasPrefix(n, putTempPrefix)) {
			if err := os.Remove(filepath.Join(dir, n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("objects: clear cache dir: %w", err)
			}
		}
	}
	return &diskCache{dir: dir, capacity: capacity, entries: map[string]*list.Element{}}, nil
}

// cacheName is the file name of key in the cache directory.
func cacheName(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

func isCacheName(n string) bool {
	if len(n) != 2*sha256.Size {
		return false
	}
	_, err := hex.DecodeString(n)
	return err == nil && strings.ToLower(n) == n
}

// open returns the cached file of key, opened, and marks it used; ok is
// false on a miss.
func (c *diskCache) open(key string) (cf cachedFile, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		return cachedFile{}, false
	}
	e := el.Value.(*cacheEntry)
	f, err := os.Open(filepath.Join(c.dir, e.name))
	if err != nil {
		// Removed behind our back (someone cleaned the directory): forget
		// it, and let the caller build it again.
		c.removeLocked(el, false)
		return cachedFile{}, false
	}
	c.lru.MoveToFront(el)
	return cachedFile{f: f, size: e.size, etag: e.etag}, true
}

// put stores b as the content of key and evicts least recently used files
// past capacity. It reports whether b was stored (a file larger than the
// whole cache is not) and how many files were evicted.
func (c *diskCache) put(key string, b []byte, etag string) (stored bool, evicted int, err error) {
	size := int64(len(b))
	if size > c.capacity {
		return false, 0, nil
	}
	// Write outside mu: it is the slow part. The temporary name is unique,
	// so concurrent puts of one key do not interfere; the last rename wins,
	// and both wrote the same bytes.
	tmp, err := os.CreateTemp(c.dir, putTempPrefix+"*")
	if err != nil {
		return false, 0, fmt.Errorf("objects: cache write: %w", err)
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(tmp.Name())
		return false, 0, fmt.Errorf("objects: cache write: %w", err)
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	name := cacheName(key)
	if err := os.Rename(tmp.Name(), filepath.Join(c.dir, name)); err != nil {
		_ = os.Remove(tmp.Name())
		return false, 0, fmt.Errorf("objects: cache write: %w", err)
	}
	// A reader holding the previous file of key (same bytes) keeps reading
	// the old inode; the rename replaced the name only.
	if el, ok := c.entries[key]; ok {
		e := el.Value.(*cacheEntry)
		c.bytes += size - e.size
		e.size, e.etag = size, etag
		c.lru.MoveToFront(el)
	} else {
		c.entries[key] = c.lru.PushFront(&cacheEntry{key: key, name: name, size: size, etag: etag})
		c.bytes += size
	}
	for c.bytes > c.capacity {
		victim := c.lru.Back()
		if victim == c.lru.Front() {
			break // only the new file is left; it fits (size <= capacity)
		}
		c.removeLocked(victim, true)
		evicted++
	}
	return true, evicted, nil
}

// removeLocked drops an entry from the index and, when unlink is set, its
// file from disk. Readers that opened it keep their descriptors.
func (c *diskCache) removeLocked(el *list.Element, unlink bool) {
	e := el.Value.(*cacheEntry)
	c.lru.Remove(el)
	delete(c.entries, e.key)
	c.bytes -= e.size
	if unlink {
		_ = os.Remove(filepath.Join(c.dir, e.name))
	}
}

// removePrefix drops every cached file whose key starts with prefix and
// returns how many. Readers that opened one keep their descriptors.
func (c *diskCache) removePrefix(prefix string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for key, el := range c.entries {
		if strings.HasPrefix(key, prefix) {
			c.removeLocked(el, true)
			n++
		}
	}
	return n
}

// usage returns the number of cached files and their bytes.
func (c *diskCache) usage() (files int, bytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries), c.bytes
}
