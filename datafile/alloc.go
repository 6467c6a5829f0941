package datafile

import (
	"math/bits"
	"sync"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Size classes of poolAllocator: buffers from 2^minPoolClass to
// 2^maxPoolClass bytes are pooled, smaller and larger ones are not.
const (
	minPoolClass = 16 // 64 KiB: below, Go's allocator does well
	maxPoolClass = 28 // 256 MiB
)

// poolAllocator is the arrow memory.Allocator of every build: large
// buffers (Arrow builders' values, Parquet pages and dictionaries) go back
// to a pool per power-of-two size class when Arrow frees them, and the next
// build takes them from there instead of allocating (and having the
// collector reclaim) some hundred MB per million records. Arrow frees a
// buffer only when no array refers to it (reference counts; Reallocate
// frees the old buffer, as C's realloc does, which arrow-go's own
// Mallocator relies on), and a build keeps nothing from the allocator: the
// file is copied out of its own buffer and the statistics are read back
// from the file's bytes. Memory is zeroed when handed out, as Go's
// allocator does. The pools are sync.Pools: the collector empties them
// when builds stop.
type poolAllocator struct {
	small   memory.GoAllocator
	classes [maxPoolClass + 1]sync.Pool // *[]byte of len = cap = 1<<class
}

var _ memory.Allocator = (*poolAllocator)(nil)

// buildMem is the allocator of every build.
var buildMem = &poolAllocator{}

// poolClass returns the size class of a buffer of n bytes, or -1 when n is
// not pooled.
func poolClass(n int) int {
	if n <= 1<<(minPoolClass-1) {
		return -1
	}
	c := bits.Len(uint(n - 1))
	if c > maxPoolClass {
		return -1
	}
	return max(c, minPoolClass)
}

// Allocate returns size zeroed bytes. A pooled buffer's capacity is its
// class size.
func (a *poolAllocator) Allocate(size int) []byte {
	c := poolClass(size)
	if c < 0 {
		return a.small.Allocate(size)
	}
	if v, ok := a.classes[c].Get().(*[]byte); ok {
		b := (*v)[:size]
		clear(b)
		return b
	}
	return make([]byte, 1<<c)[:size]
}

// Reallocate returns a buffer of size bytes that starts with b's bytes;
// b is freed when a new buffer is needed. Bytes past len(b) are zero.
func (a *poolAllocator) Reallocate(size int, b []byte) []byte {
	if cap(b) >= size {
		if size > len(b) {
			clear(b[len(b):size])
		}
		return b[:size]
	}
	nb := a.Allocate(size)
	copy(nb, b)
	a.Free(b)
	return nb
}

// Free puts b back into its class's pool when b is a pooled buffer (its
// capacity a class size); other buffers are left to the collector.
func (a *poolAllocator) Free(b []byte) {
	n := cap(b)
	c := poolClass(n)
	if c < 0 || n != 1<<c {
		return
	}
	b = b[:n]
	a.classes[c].Put(&b)
}
