package datafile

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/codec"
)

// TestPoolAllocator: buffers handed out are zeroed even when they come back
// from the pool dirty; Reallocate keeps the bytes and zeroes the rest;
// small buffers and buffers of other capacities are never pooled.
func TestPoolAllocator(t *testing.T) {
	a := &poolAllocator{}
	const size = 100 << 10 // class 17 (128 KiB)
	for range 20 {
		b := a.Allocate(size)
		require.Len(t, b, size)
		require.Equal(t, 1<<17, cap(b))
		require.Zero(t, bytes.Count(b, []byte{0})-size, "handed out zeroed")
		for i := range b {
			b[i] = 0xAB
		}
		a.Free(b)
	}
	b := a.Allocate(10)
	copy(b, "0123456789")
	b = a.Reallocate(size, b)
	require.Equal(t, "0123456789", string(b[:10]))
	require.Zero(t, bytes.Count(b[10:], []byte{0})-(size-10))
	a.Free(b)
	b = a.Allocate(size)
	b = b[:10]
	b[0] = 1
	b = a.Reallocate(size, b) // within capacity: the bytes past 10 are zeroed again
	require.Equal(t, byte(1), b[0])
	require.Zero(t, bytes.Count(b[1:], []byte{0})-(size-1))

	require.Equal(t, -1, poolClass(32<<10), "32 KiB and less: Go's allocator")
	require.Equal(t, minPoolClass, poolClass(32<<10+1))
	require.Equal(t, -1, poolClass(1<<maxPoolClass+1), "past the largest class: not pooled")
	a.Free(make([]byte, 100<<10)) // not a class size: dropped
	got := a.Allocate(size)
	require.Equal(t, 1<<17, cap(got))
}

// TestBuildPooledConcurrent: builds running at once on the shared pool
// allocator make the same bytes as one build alone (a buffer handed to two
// builds, or reused while still read, would change them).
func TestBuildPooledConcurrent(t *testing.T) {
	sc, err := codec.TableSchema(codec.String, codec.Raw, nil)
	require.NoError(t, err)
	spec := &Spec{Schema: sc, KeyFormat: codec.String, ValueFormat: codec.Raw}
	ranges := make([][]*kgo.Record, 4)
	for p := range ranges {
		for i := range 8_000 {
			ranges[p] = append(ranges[p], &kgo.Record{Partition: int32(p), Offset: int64(i),
				Timestamp: time.UnixMilli(1_700_000_000_000 + int64(i)),
				Key:       fmt.Appendf(nil, "k%d", i%97), Value: fmt.Appendf(nil, "partition %d value %d %x", p, i, i*7919)})
		}
	}
	want := make([][32]byte, len(ranges))
	for p, recs := range ranges {
		res, err := Build(spec, recs)
		require.NoError(t, err)
		want[p] = res.Data.SHA256
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4*len(ranges))
	for range 4 {
		for p, recs := range ranges {
			wg.Go(func() {
				res, err := Build(spec, recs)
				if err == nil && res.Data.SHA256 != want[p] {
					err = fmt.Errorf("partition %d: bytes differ from the build alone", p)
				}
				if err != nil {
					errs <- err
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
