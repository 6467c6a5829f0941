package objects

import (
	"container/list"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/minkhq/mink/pgstore"
	"github.com/minkhq/mink/tables"
)

// metadataFile is one immutable metadata file.
type metadataFile struct {
	key     string
	content []byte
	etag    string    // quoted hex SHA-256 of content
	modTime time.Time // metadata_files.created_at
}

// errNoMetadataFile: no metadata_files row has the key.
var errNoMetadataFile = errors.New("no such metadata file")

// readMetadataFile reads a metadata file from PostgreSQL.
func (s *Server) readMetadataFile(ctx context.Context, key string) (*metadataFile, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.QueryTimeout)
	defer cancel()
	f, err := tables.ReadMetadataFile(ctx, s.pool, key)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, errNoMetadataFile
	}
	if err != nil {
		return nil, fmt.Errorf("objects: read metadata file %s: %w", key, pgstore.Unavailable(err))
	}
	sum := sha256.Sum256(f.Content)
	return &metadataFile{key: key, content: f.Content, etag: `"` + hex.EncodeToString(sum[:]) + `"`, modTime: f.CreatedAt}, nil
}

// memoryCache keeps metadata files in memory, bounded by bytes, least
// recently used evicted first. Metadata files never change once written, so
// an entry is never stale; a missing file is not remembered (it may be
// committed a moment later).
type memoryCache struct {
	capacity int64

	mu      sync.Mutex
	entries map[string]*list.Element // key → element holding *metadataFile
	lru     list.List
	bytes   int64
}

func newMemoryCache(capacity int64) *memoryCache {
	return &memoryCache{capacity: capacity, entries: map[string]*list.Element{}}
}

func (c *memoryCache) get(key string) (*metadataFile, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		return nil, false
	}
	c.lru.MoveToFront(el)
	return el.Value.(*metadataFile), true
}

func (c *memoryCache) put(m *metadataFile) {
	size := int64(len(m.content))
	if size > c.capacity {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[m.key]; ok {
		return
	}
	c.entries[m.key] = c.lru.PushFront(m)
	c.bytes += size
	for c.bytes > c.capacity {
		el := c.lru.Back()
		old := el.Value.(*metadataFile)
		c.lru.Remove(el)
		delete(c.entries, old.key)
		c.bytes -= int64(len(old.content))
	}
}

// removePrefix drops every file whose key starts with prefix and returns
// how many.
func (c *memoryCache) removePrefix(prefix string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for key, el := range c.entries {
		if strings.HasPrefix(key, prefix) {
			m := el.Value.(*metadataFile)
			c.lru.Remove(el)
			delete(c.entries, key)
			c.bytes -= int64(len(m.content))
			n++
		}
	}
	return n
}
