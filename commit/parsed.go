package commit

import (
	"fmt"
	"sync"

	"github.com/apache/iceberg-go/table"
)

// parsedSlots is how many parsed metadata files a process keeps.
const parsedSlots = 16

// parsedCache keeps the parsed form of the metadata files this process
// committed or parsed last, by location (a metadata file never changes).
// Parsing the metadata JSON is most of a commit's CPU once the history is
// long (docs/design.md §4.6), and a commit usually builds on a head this
// node committed or parsed moments before.
type parsedCache struct {
	mu    sync.Mutex
	byLoc map[string]table.Metadata
	order []string // oldest first
}

var parsed = &parsedCache{byLoc: map[string]table.Metadata{}}

func (c *parsedCache) get(loc string) table.Metadata {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.byLoc[loc]
}

func (c *parsedCache) put(loc string, md table.Metadata) {
	if md == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byLoc[loc]; ok {
		return
	}
	if len(c.order) == parsedSlots {
		delete(c.byLoc, c.order[0])
		c.order = c.order[1:]
	}
	c.byLoc[loc] = md
	c.order = append(c.order, loc)
}

// Parsed returns the head's metadata parsed, from the process's cache when
// it holds that location. The result is shared: only read it.
func (h *Head) Parsed() (table.Metadata, error) {
	if md := parsed.get(h.MetadataLocation); md != nil {
		return md, nil
	}
	md, err := table.ParseMetadataBytes(h.Metadata)
	if err != nil {
		return nil, fmt.Errorf("commit: metadata %s: %w", h.MetadataLocation, err)
	}
	parsed.put(h.MetadataLocation, md)
	return md, nil
}
