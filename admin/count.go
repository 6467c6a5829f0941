package admin

import (
	"context"
	"maps"
	"slices"

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
// header of their key (when key) and of their value (when value). Errors
// wrap outage.ErrUnavailable when Kafka cannot be read.
func (h *Handler) countWriters(ctx context.Context, topic string, offs map[int32]kafka.Offsets, key, value bool) (schemas.WriterCounts, error) {
	c := schemas.WriterCounts{Key: map[int]int64{}, Value: map[int]int64{}, Exact: true}
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
		part := schemas.WriterCounts{Key: map[int]int64{}, Value: map[int]int64{}}
		var read int64 // offsets read
		for _, w := range windows {
			for at := w[0]; at < w[1]; at += countChunk {
				recs, err := h.kafka.ReadRange(ctx, topic, p, at, min(at+countChunk, w[1]))
				if err != nil {
					return c, err
				}
				for _, r := range recs {
					c.Read++
					count(part.Key, key, r.Key)
					count(part.Value, value, r.Value)
					if value && r.Value == nil {
						part.Value[tombstone]++
					}
				}
			}
			read += w[1] - w[0]
		}
		add := func(dst, src map[int]int64) {
			for id, n := range src {
				if !c.Exact {
					n = (n*span + read/2) / read // scaled to the partition's offsets, rounded
				}
				dst[id] += n
			}
		}
		add(c.Key, part.Key)
		add(c.Value, part.Value)
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

// count adds one to counts at the schema id of b's wire header (at
// noHeader when b has none), when on and b is not null.
func count(counts map[int]int64, on bool, b []byte) {
	if !on || b == nil {
		return
	}
	id, _, err := wire.Header(b)
	if err != nil {
		id = noHeader
	}
	counts[id]++
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
