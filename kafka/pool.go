package kafka

import (
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
)

// recordPool gives a Reader's fetches their record slabs and decompression
// buffers back once every record of a batch is recycled (franz-go's
// kgo.PoolRecords and kgo.PoolDecompressBytes; Recycle): an indexer reads
// each record once and lets it go when its range is recorded, so the
// memory of one range's records serves the next instead of becoming
// garbage (a range of small records is hundreds of thousands of Record
// structs, each with pointers the collector scans).
type recordPool struct {
	recs  sync.Pool // *[]kgo.Record
	bytes sync.Pool // *[]byte
}

var (
	_ kgo.PoolRecords         = (*recordPool)(nil)
	_ kgo.PoolDecompressBytes = (*recordPool)(nil)
)

// GetRecords returns a slice of capacity at least n (franz-go zeroes each
// record on Recycle, so the slab comes back clean).
func (p *recordPool) GetRecords(n int) []kgo.Record {
	if v, ok := p.recs.Get().(*[]kgo.Record); ok {
		if cap(*v) >= n {
			return (*v)[:0]
		}
		p.recs.Put(v)
	}
	return make([]kgo.Record, 0, n)
}

// PutRecords takes back a slab whose records were all recycled.
func (p *recordPool) PutRecords(s []kgo.Record) { p.recs.Put(&s) }

// GetDecompressBytes returns a buffer to decompress into; only its capacity
// counts (franz-go decodes into it when it is large enough, else into a new
// buffer, which is the one put back).
func (p *recordPool) GetDecompressBytes(_ []byte, _ kgo.CompressionCodecType) []byte {
	if v, ok := p.bytes.Get().(*[]byte); ok {
		return (*v)[:0]
	}
	return nil
}

// PutDecompressBytes takes back a buffer no record refers to any more
// (franz-go zeroes it first).
func (p *recordPool) PutDecompressBytes(b []byte) { p.bytes.Put(&b) }

// Recycle hands records that a Reader returned back to its pool once the
// caller is done with them: no field of a recycled record (its key and
// value bytes included) may be used afterwards. Records that do not come
// from a pool (ReadRange's, a test's) are left alone.
func Recycle(recs []*kgo.Record) {
	for _, r := range recs {
		r.Recycle()
	}
}
