package catalog

import (
	"encoding/json"
	"log/slog"
	"maps"
	"slices"
	"sync"

	"github.com/minkhq/mink/tables"
)

// clientSettingsDropped holds, by metadata location (a metadata file
// never changes), the metadata a load serves in place of a stored one
// that holds a property tables.ClientSetting refuses (set before Mink
// refused them); nil when the stored one is served as it is.
type clientSettingsDropped struct {
	mu   sync.Mutex
	byLo map[string][]byte
}

// servedMetadata returns the metadata JSON a load answers for the stored
// metadata at location: as stored, or, when its properties hold a key
// tables.ClientSetting refuses, the same document without those keys
// (PyIceberg merges a loaded table's properties into its FileIO settings,
// docs/design.md §5), logged once per metadata file. Invalid JSON is
// returned as it is, for the caller's check.
func (c *clientSettingsDropped) servedMetadata(log *slog.Logger, location string, stored []byte) []byte {
	c.mu.Lock()
	out, ok := c.byLo[location]
	c.mu.Unlock()
	if ok {
		if out == nil {
			return stored
		}
		return out
	}
	out = dropClientSettings(log, location, stored)
	c.mu.Lock()
	if c.byLo == nil || len(c.byLo) > 10000 {
		c.byLo = map[string][]byte{} // a bound; most entries are nil
	}
	c.byLo[location] = out
	c.mu.Unlock()
	if out == nil {
		return stored
	}
	return out
}

func dropClientSettings(log *slog.Logger, location string, stored []byte) []byte {
	var head struct {
		Properties map[string]string `json:"properties"`
	}
	if json.Unmarshal(stored, &head) != nil {
		return nil
	}
	var drop []string
	for k := range head.Properties {
		if tables.ClientSetting(k) {
			drop = append(drop, k)
		}
	}
	if len(drop) == 0 {
		return nil
	}
	var doc map[string]json.RawMessage
	if json.Unmarshal(stored, &doc) != nil {
		return nil
	}
	props := maps.Clone(head.Properties)
	for _, k := range drop {
		delete(props, k)
	}
	pb, err := json.Marshal(props)
	if err != nil {
		return nil
	}
	doc["properties"] = pb
	out, err := json.Marshal(doc)
	if err != nil {
		return nil
	}
	slices.Sort(drop)
	log.Warn("a table's properties configure readers' IO: left out of its loads (remove them with mink table properties)",
		"metadata_location", location, "properties", drop)
	return out
}
