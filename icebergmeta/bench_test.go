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

// BenchmarkAppendWeekOfHistory is one append commit on a table that
// committed every 2 s for 7 days under the default thinning
// (DefaultThinning): the history is simulated through the expiry, the
// retained snapshots are then committed for real (one data file each), and
// the benchmark times the next append. It reports the snapshots kept and
// the metadata JSON's size.
func BenchmarkAppendWeekOfHistory(b *testing.B) {
	start := time.Now().Add(time.Second).UnixMilli()
	const interval = 2 * time.Second
	kept, err := icebergmeta.SimulateHistory(icebergmeta.DefaultThinning, interval, 7*24*time.Hour, start)
	if err != nil {
		b.Fatal(err)
	}
	s := newStore()
	metaLoc, meta, err := icebergmeta.NewTable(earthquakesSchema(), location, tableUUID, nil)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	t0 := time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC)
	in := icebergmeta.AppendInput{Metadata: meta, MetadataLocation: metaLoc, Read: s.read}
	var res *icebergmeta.CommitResult
	for i, ts := range kept {
		in.Added = []icebergmeta.AddedFile{rangeFile(int32(i%4), int64(i)*100, int64(i+1)*100, t0, 1, 2)}
		in.SnapshotID, in.Now = int64(i+1), time.UnixMilli(ts)
		if res, err = icebergmeta.Append(ctx, in); err != nil {
			b.Fatal(err)
		}
		s.keep(res)
		in.Metadata, in.MetadataLocation, in.Parsed = res.Metadata, res.MetadataLocation, res.Parsed
	}
	if n := len(res.Parsed.Snapshots()); n != len(kept) {
		b.Fatalf("%d snapshots committed, %d retained", len(kept), n)
	}
	n := int64(len(kept))
	in.Added = []icebergmeta.AddedFile{rangeFile(0, n*100, (n+1)*100, t0, 1, 2)}
	in.SnapshotID, in.Now = n+1, time.UnixMilli(kept[len(kept)-1]).Add(interval)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if res, err = icebergmeta.Append(ctx, in); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(res.Parsed.Snapshots())), "snapshots")
	b.ReportMetric(float64(len(res.Metadata)), "metadata-bytes")
}
