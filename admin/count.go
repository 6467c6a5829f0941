package admin

import (
	"context"
	"maps"
	"slices"

	"github.com/minkhq/mink/codec"
	"github.com/minkhq/mink/codec/wire"
	"github.com/minkhq/mink/kafka"
	"github.com/minkhq/mink/schemas"
)

// CountBudget is the default of Config.CountBudget: how many retained
// offsets a create of a registry table reads at most to count the records
// of each writer schema for its plan (docs/design.md §4.7): all of them
// when the topic retains no more, else CountWindows windows spread over
// each partition, whose counts are scaled to the partition's retained
// offsets and reported as an estimate.
const CountBudget = 200_000

// CountWindows is how many windows of a partition an estimate reads.
const CountWindows = 20

// countChunk bounds the records one ReadRange holds in memory.
const countChunk = 10_000

// countWriters counts the retained records of topic ([log start, last
// stable offset) of each partition of offs) by the schema id in the wire
// header of their key (when key is a registry format) and of their value
// (when value is), and for Protobuf also by message indexes. Errors wrap
// outage.ErrUnavailable when Kafka cannot be read.
func (h *Handler) countWriters(ctx context.Context, topic string, offs map[int32]kafka.Offsets, key, value codec.Format) (schemas.WriterCounts, error) {
	c := schemas.WriterCounts{Key: map[int]int64{}, Value: map[int]int64{}, Exact: true,
		KeyMessages: map[int]map[string]int64{}, ValueMessages: map[int]map[string]int64{}}
	for _, o := range offs {
		c.Retained += max(0, o.LastStable-o.LogStart)
	}
	budget := h.cfg.CountBudget
	c.Exact = c.Retained <= budget
	for _, p := range slices.Sorted(maps.Keys(offs)) {
		o := offs[p]
		span := max(0, o.LastStable-o.LogStart)
		if span == 0 {
			continue
		}
		windows := [][2]int64{{o.LogStart, o.LastStable}}
		if !c.Exact {
			windows = sampleWindows(o.LogStart, o.LastStable, max(CountWindows, budget*span/c.Retained))
		}
		part := schemas.WriterCounts{Key: map[int]int64{}, Value: map[int]int64{},
			KeyMessages: map[int]map[string]int64{}, ValueMessages: map[int]map[string]int64{}}
		var read int64 // offsets read
		for _, w := range windows {
			for at := w[0]; at < w[1]; at += countChunk {
				recs, err := h.kafka.ReadRange(ctx, topic, p, at, min(at+countChunk, w[1]))
				if err != nil {
					return c, err
				}
				for _, r := range recs {
					c.Read++
					count(part.Key, part.KeyMessages, key, r.Key)
					count(part.Value, part.ValueMessages, value, r.Value)
					if value.Registry() && r.Value == nil {
						part.Value[tombstone]++
					}
				}
			}
			read += w[1] - w[0]
		}
		add(c.Key, part.Key, c.Exact, span, read)
		add(c.Value, part.Value, c.Exact, span, read)
		for _, m := range []struct{ dst, src map[int]map[string]int64 }{{c.KeyMessages, part.KeyMessages}, {c.ValueMessages, part.ValueMessages}} {
			for id, byIndexes := range m.src {
				if m.dst[id] == nil {
					m.dst[id] = map[string]int64{}
				}
				add(m.dst[id], byIndexes, c.Exact, span, read)
			}
		}
	}
	for _, m := range []map[int]int64{c.Key, c.Value} {
		c.Unframed += m[noHeader]
		delete(m, noHeader)
	}
	c.Tombstones = c.Value[tombstone]
	delete(c.Value, tombstone)
	return c, nil
}

// Ids that count no writer schema while scaling: records without a
// wire header, and values that are null. Both are dead letters.
const (
	noHeader  = -1
	tombstone = -2
)

// add adds the counts of src to dst, each scaled from read offsets to
// span (rounded) unless exact.
func add[K comparable](dst, src map[K]int64, exact bool, span, read int64) {
	for k, n := range src {
		if !exact {
			n = (n*span + read/2) / read // scaled to the partition's offsets, rounded
		}
		dst[k] += n
	}
}

// count adds one to counts at the schema id of b's wire header (at
// noHeader when b has none), when format is a registry one and b is not
// null; for Protobuf also to messages at that id and b's message indexes
// (codec.IndexesString).
func count(counts map[int]int64, messages map[int]map[string]int64, format codec.Format, b []byte) {
	if !format.Registry() || b == nil {
		return
	}
	id, rest, err := wire.Header(b)
	if err != nil {
		counts[noHeader]++
		return
	}
	counts[id]++
	if format != codec.Protobuf {
		return
	}
	indexes, _, err := wire.MessageIndexes(rest)
	if err != nil {
		return // a dead letter whatever the plan: counted by id only
	}
	if messages[id] == nil {
		messages[id] = map[string]int64{}
	}
	messages[id][codec.IndexesString(indexes)]++
}

// sampleWindows returns CountWindows windows of [start, end) that hold
// about n offsets together, evenly spread from start to end.
func sampleWindows(start, end, n int64) [][2]int64 {
	span := end - start
	size := max(1, n/CountWindows)
	out := make([][2]int64, 0, CountWindows)
	for i := int64(0); i < CountWindows; i++ {
		from := start + i*span/CountWindows
		out = append(out, [2]int64{from, min(from+size, end)})
	}
	return out
}
