package icebergmeta_test

import (
	"context"
	"testing"
	"time"

	"github.com/minkhq/mink/icebergmeta"
)

// BenchmarkAppend100Manifests is one commit of one file per partition on a
// table whose current snapshot lists 100 manifests (100 earlier commits):
// the cost grows with the manifest list, which Append reads and rewrites.
func BenchmarkAppend100Manifests(b *testing.B) {
	s := newStore()
	metaLoc, meta, err := icebergmeta.NewTable(earthquakesSchema(), location, tableUUID, nil)
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC)
	now := time.Now()
	for i := range int64(100) {
		r := s.commit(b, metaLoc, meta, i+1, now, rangeFile(int32(i%4), i*100, (i+1)*100, t0, 1, 2))
		metaLoc, meta = r.MetadataLocation, r.Metadata
	}
	added := []icebergmeta.AddedFile{
		rangeFile(0, 10000, 10100, t0, 1, 2),
		rangeFile(1, 10000, 10100, t0, 1, 2),
		rangeFile(2, 10000, 10100, t0, 1, 2),
		rangeFile(3, 10000, 10100, t0, 1, 2),
	}
	in := icebergmeta.AppendInput{Metadata: meta, MetadataLocation: metaLoc, Added: added,
		SnapshotID: 1000, Now: now, Read: s.read}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := icebergmeta.Append(ctx, in); err != nil {
			b.Fatal(err)
		}
	}
}
