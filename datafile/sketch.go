package datafile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/datasketches-go/theta"
	"github.com/apache/iceberg-go"
	"github.com/twmb/murmur3"
)

// Theta sketches of a data file's columns (docs/design.md §4.3, §4.6): for
// each primitive field of the table schema, top-level or nested in structs,
// a DataSketches theta sketch of its non-null values, each value as the
// bytes of Iceberg's single-value serialization (Iceberg spec, Appendix D),
// exactly as Iceberg Java's Spark ThetaSketchAgg and Trino's
// IcebergThetaSketchForStats feed UpdateSketch.update(Conversions.toByteBuffer
// (type, value)). Sketches use DataSketches' defaults (lgK 12, seed 9001),
// which the Iceberg Puffin spec names for apache-datasketches-theta-v1 blobs.
// Fields inside lists and maps get none: their values are not one per row,
// and Spark's ComputeTableStats and Trino's ANALYZE sketch only columns of
// rows. Sketches are not part of the Parquet bytes.

// SketchLgK and SketchSeed are the theta sketch parameters: DataSketches'
// defaults, which Iceberg's readers assume (Puffin spec,
// apache-datasketches-theta-v1: "seed 9001").
const (
	SketchLgK  = theta.DefaultLgK
	SketchSeed = theta.DefaultSeed
)

// Sketches are a data file's column sketches: field id to a serialized
// DataSketches compact theta sketch (ordered; serial version 4, the
// compressed form, when the sketch has entries to compress, else serial
// version 3). Union merges them without rescanning the data.
type Sketches map[int][]byte

// sketchMagic starts MarshalBinary's encoding, which is stored in Postgres
// (data_files.sketches, tail_files.sketches).
const sketchMagic = "MTS1"

// MarshalBinary encodes s as "MTS1" then, by increasing field id, the
// field id (uint32 big-endian), the sketch's length (uint32 big-endian) and
// the sketch. nil or empty s encodes as nil.
func (s Sketches) MarshalBinary() ([]byte, error) {
	if len(s) == 0 {
		return nil, nil
	}
	ids := make([]int, 0, len(s))
	n := len(sketchMagic)
	for id, b := range s {
		ids = append(ids, id)
		n += 8 + len(b)
	}
	slices.Sort(ids)
	out := make([]byte, 0, n)
	out = append(out, sketchMagic...)
	for _, id := range ids {
		out = binary.BigEndian.AppendUint32(out, uint32(id))
		out = binary.BigEndian.AppendUint32(out, uint32(len(s[id])))
		out = append(out, s[id]...)
	}
	return out, nil
}

// UnmarshalSketches decodes MarshalBinary's encoding; nil or empty b is no
// sketch. A truncated or foreign encoding is an error.
func UnmarshalSketches(b []byte) (Sketches, error) {
	if len(b) == 0 {
		return nil, nil
	}
	if !bytes.HasPrefix(b, []byte(sketchMagic)) {
		return nil, errors.New("datafile: sketches: bad magic")
	}
	b = b[len(sketchMagic):]
	s := Sketches{}
	for len(b) > 0 {
		if len(b) < 8 {
			return nil, errors.New("datafile: sketches: truncated")
		}
		id, n := int(binary.BigEndian.Uint32(b)), int(binary.BigEndian.Uint32(b[4:]))
		if len(b)-8 < n {
			return nil, errors.New("datafile: sketches: truncated")
		}
		s[id] = b[8 : 8+n : 8+n]
		b = b[8+n:]
	}
	return s, nil
}

// NewSketch returns an empty update sketch with SketchLgK and SketchSeed.
func NewSketch() *theta.QuickSelectUpdateSketch {
	sk, err := theta.NewQuickSelectUpdateSketch(theta.WithUpdateSketchLgK(SketchLgK), theta.WithUpdateSketchSeed(SketchSeed))
	if err != nil {
		panic(err) // constant parameters
	}
	return sk
}

// colSketch is the sketch and NaN count of one field being built.
//
// Most values a build feeds change nothing: a repeat of a value already
// retained, or, once the sketch estimates, a hash at or above theta. The
// library finds that out only after hashing the value with its own
// MurmurHash3, which reads the value a byte at a time; colSketch hashes it
// first with twmb/murmur3 (the same MurmurHash3 x64_128, seed SketchSeed in
// both halves, as DataSketches' update(byte[]) uses) and calls the library
// only for a value that may change the sketch (admit). The sketch ends the
// same, byte for byte (TestSketchGoldenVectors, TestSketchAdmitSame).
type colSketch struct {
	sk   *theta.QuickSelectUpdateSketch
	nans int64
	// buf holds a fixed-width value's serialization. The previous value
	// fed is prev (a slice of the column's data) or pbuf[:plen] (a
	// fixed-width copy): a run of equal values is fed once, as a sketch
	// ignores repeats anyway and skipping them saves the hash.
	buf     [16]byte
	pbuf    [16]byte
	plen    int
	prev    []byte
	prevU   uint64 // the previous 4- or 8-byte value (feed32, feed64)
	hasPrev bool
	// fed is set once a value went to the sketch; seen holds hashes
	// (the library's: the first half >> 1) of values fed, by their low
	// bits, the last one fed in each slot.
	fed  bool
	seen [seenSlots]uint64
}

// seenSlots is the size of colSketch.seen: enough for the distinct values
// of a low-cardinality column (codes, names, small numbers).
const seenSlots = 4096

// reset readies c for a new field.
func (c *colSketch) reset() {
	c.sk, c.nans, c.prev, c.plen, c.prevU, c.hasPrev, c.fed = NewSketch(), 0, nil, 0, 0, false, false
	clear(c.seen[:])
}

// admit reports whether a value whose MurmurHash3 (first half) is h1 may
// change the sketch, which then must be updated with it. It may not when
// the library would drop it: its hash (h1 >> 1) is at or above theta
// (screened; also true of every hash the library evicted), or it is a hash
// fed before (a duplicate, still retained since it is below theta). A
// zero hash, which the library rejects, is found in an empty slot. The
// first value is always admitted: it makes the sketch non-empty whatever
// its hash.
func (c *colSketch) admit(h1 uint64) bool {
	h := h1 >> 1
	if c.fed && h >= c.sk.Theta64() {
		return false
	}
	slot := &c.seen[h&(seenSlots-1)]
	if c.fed && *slot == h {
		return false
	}
	*slot, c.fed = h, true
	return true
}

// hashBytes is DataSketches' hash of v: MurmurHash3 x64_128 with seed
// SketchSeed, its first half.
func hashBytes(v []byte) uint64 {
	h1, _ := murmur3.SeedSum128(SketchSeed, SketchSeed, v)
	return h1
}

// hashShort is hashBytes of the n (at most 8) bytes of v little-endian:
// MurmurHash3 x64_128 of an input shorter than one block is its tail
// mixed in and the finalization, done here without a buffer or a call.
// TestSketchAdmitSame checks it against the library.
func hashShort(v uint64, n uint64) uint64 {
	const c1, c2 = 0x87c37b91114253d5, 0x4cf5ad432745937f
	h1, h2 := uint64(SketchSeed), uint64(SketchSeed)
	k1 := v * c1
	k1 = bits.RotateLeft64(k1, 31) * c2
	h1 ^= k1
	h1 ^= n
	h2 ^= n
	h1 += h2
	h2 += h1
	h1, h2 = fmix64(h1), fmix64(h2)
	return h1 + h2
}

// fmix64 is MurmurHash3's finalization mix.
func fmix64(k uint64) uint64 {
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	k *= 0xc4ceb9fe1a85ec53
	k ^= k >> 33
	return k
}

// feed64 feeds a value whose serialization is the 8 bytes of v
// little-endian. UpdateInt64 hashes exactly those bytes (MurmurHash3 of one
// long is that of its 8 bytes little-endian; the golden vectors pin it),
// without going through a buffer.
func (c *colSketch) feed64(v uint64) {
	if c.hasPrev && v == c.prevU {
		return
	}
	c.prevU, c.hasPrev = v, true
	if c.admit(hashShort(v, 8)) {
		_ = c.sk.UpdateInt64(int64(v))
	}
}

// feed32 is feed64 for 4 bytes little-endian. It hashes the bytes:
// datasketches-go v0.2.0's UpdateInt32 hashes a negative int otherwise
// (TestColumnSketchesAndNaN caught it).
func (c *colSketch) feed32(v uint32) {
	if c.hasPrev && uint64(v) == c.prevU {
		return
	}
	c.prevU, c.hasPrev = uint64(v), true
	if c.admit(hashShort(uint64(v), 4)) {
		binary.LittleEndian.PutUint32(c.buf[:], v)
		_ = c.sk.UpdateBytes(c.buf[:4])
	}
}

// feed updates the sketch with v unless it equals the previous value.
// Empty values are skipped: Java's UpdateSketch.update rejects an empty
// array, so an empty string or binary leaves the sketch as it was.
func (c *colSketch) feed(v []byte) {
	if len(v) == 0 || (c.hasPrev && bytes.Equal(v, c.prev)) {
		return
	}
	c.prev, c.hasPrev = v, true
	if c.admit(hashBytes(v)) {
		_ = c.sk.UpdateBytes(v) // errors say only "duplicate" or "above theta"
	}
}

// feedFixed is feed for a fixed-width value in c.buf[:n]; prev keeps a copy.
func (c *colSketch) feedFixed(n int) {
	v := c.buf[:n]
	if c.hasPrev && bytes.Equal(v, c.pbuf[:c.plen]) {
		return
	}
	c.plen = copy(c.pbuf[:], v)
	c.hasPrev = true
	if c.admit(hashBytes(v)) {
		_ = c.sk.UpdateBytes(v)
	}
}

// columnSketches computes the sketches of rec's primitive fields (schema
// sc, which rec was built from) and the NaN counts of its float and double
// fields (Iceberg's nan_value_counts: the NaN values among non-null ones).
func columnSketches(sc *iceberg.Schema, rec arrow.RecordBatch) (Sketches, map[int]int64, error) {
	w := &sketchWalk{sketches: Sketches{}, nans: map[int]int64{}} // on the heap: c is 32 KiB
	for i, f := range sc.Fields() {
		if err := w.field(f, rec.Column(i), nil); err != nil {
			return nil, nil, err
		}
	}
	return w.sketches, w.nans, nil
}

type sketchWalk struct {
	sketches Sketches
	nans     map[int]int64
	c        colSketch // reused across fields; sk is new per field
}

// field sketches f, whose values are arr; valid, when not nil, says which
// rows have no null ancestor struct.
func (w *sketchWalk) field(f iceberg.NestedField, arr arrow.Array, valid []bool) error {
	if st, ok := f.Type.(*iceberg.StructType); ok {
		sa, ok := arr.(*array.Struct)
		if !ok {
			return fmt.Errorf("datafile: sketch field %d: struct built as %s", f.ID, arr.DataType())
		}
		if sa.NullN() > 0 {
			v := make([]bool, sa.Len())
			for i := range v {
				v[i] = sa.IsValid(i) && (valid == nil || valid[i])
			}
			valid = v
		}
		for j, child := range st.FieldList {
			if err := w.field(child, sa.Field(j), valid); err != nil {
				return err
			}
		}
		return nil
	}
	if _, ok := f.Type.(iceberg.PrimitiveType); !ok {
		return nil // list or map: see the comment at the top
	}
	if ext, ok := arr.(array.ExtensionArray); ok {
		arr = ext.Storage() // uuid: its 16 bytes
	}
	c := &w.c
	c.reset()
	all := valid == nil && arr.NullN() == 0
	ok := func(i int) bool { return all || (arr.IsValid(i) && (valid == nil || valid[i])) }
	n := arr.Len()
	switch a := arr.(type) {
	case *array.Boolean:
		for i := range n {
			if ok(i) {
				c.buf[0] = 0
				if a.Value(i) {
					c.buf[0] = 1
				}
				c.feedFixed(1)
			}
		}
	case *array.Int32:
		vs := a.Int32Values()
		for i := range n {
			if ok(i) {
				c.feed32(uint32(vs[i]))
			}
		}
	case *array.Date32:
		vs := a.Date32Values()
		for i := range n {
			if ok(i) {
				c.feed32(uint32(vs[i]))
			}
		}
	case *array.Int64:
		vs := a.Int64Values()
		for i := range n {
			if ok(i) {
				c.feed64(uint64(vs[i]))
			}
		}
	case *array.Timestamp:
		vs := a.TimestampValues()
		for i := range n {
			if ok(i) {
				c.feed64(uint64(vs[i]))
			}
		}
	case *array.Time64:
		vs := a.Time64Values()
		for i := range n {
			if ok(i) {
				c.feed64(uint64(vs[i]))
			}
		}
	case *array.Float32:
		vs := a.Float32Values()
		for i := range n {
			if ok(i) {
				if vs[i] != vs[i] {
					c.nans++
				}
				// Java's ByteBuffer.putFloat: the raw bits.
				c.feed32(math.Float32bits(vs[i]))
			}
		}
		w.nans[f.ID] = c.nans
	case *array.Float64:
		vs := a.Float64Values()
		for i := range n {
			if ok(i) {
				if vs[i] != vs[i] {
					c.nans++
				}
				c.feed64(math.Float64bits(vs[i]))
			}
		}
		w.nans[f.ID] = c.nans
	case *array.String:
		offs, data := a.ValueOffsets(), a.ValueBytes()
		for i := range n {
			if ok(i) {
				c.feed(data[offs[i]-offs[0] : offs[i+1]-offs[0]])
			}
		}
	case *array.LargeString:
		offs, data := a.ValueOffsets(), a.ValueBytes()
		for i := range n {
			if ok(i) {
				c.feed(data[offs[i]-offs[0] : offs[i+1]-offs[0]])
			}
		}
	case *array.Binary:
		for i := range n {
			if ok(i) {
				c.feed(a.Value(i))
			}
		}
	case *array.LargeBinary:
		for i := range n {
			if ok(i) {
				c.feed(a.Value(i))
			}
		}
	case *array.FixedSizeBinary:
		for i := range n {
			if ok(i) {
				c.feed(a.Value(i))
			}
		}
	case *array.Decimal128:
		for i := range n {
			if ok(i) {
				v := a.Value(i)
				c.feedFixed(decimalBytes(c.buf[:], v.HighBits(), v.LowBits()))
			}
		}
	default:
		return fmt.Errorf("datafile: sketch field %d (%s): no serialization for %s", f.ID, f.Type, arr.DataType())
	}
	var out bytes.Buffer
	enc := theta.NewEncoder(&out, true)
	if err := enc.Encode(c.sk.CompactOrdered()); err != nil {
		return fmt.Errorf("datafile: sketch field %d: %w", f.ID, err)
	}
	w.sketches[f.ID] = out.Bytes()
	return nil
}

// decimalBytes writes the unscaled value hi:lo (128-bit two's complement)
// to buf as Java's BigInteger.toByteArray does (Iceberg spec, Appendix D:
// the unscaled value as a big-endian two's complement in the fewest bytes)
// and returns its length; buf[:n] holds it.
func decimalBytes(buf []byte, hi int64, lo uint64) int {
	var full [16]byte
	binary.BigEndian.PutUint64(full[:8], uint64(hi))
	binary.BigEndian.PutUint64(full[8:], lo)
	i := 0
	// A leading byte is redundant when it only repeats the sign of the
	// next one.
	for i < 15 && ((full[i] == 0 && full[i+1]&0x80 == 0) || (full[i] == 0xff && full[i+1]&0x80 != 0)) {
		i++
	}
	return copy(buf, full[i:])
}

// SketchedFields returns the ids of the fields of sc that data files keep
// sketches of: the primitive fields, top-level or nested in structs, in
// schema order.
func SketchedFields(sc *iceberg.Schema) []int {
	var ids []int
	var walk func(fs []iceberg.NestedField)
	walk = func(fs []iceberg.NestedField) {
		for _, f := range fs {
			switch t := f.Type.(type) {
			case *iceberg.StructType:
				walk(t.FieldList)
			case iceberg.PrimitiveType:
				ids = append(ids, f.ID)
			}
		}
	}
	walk(sc.Fields())
	return ids
}
