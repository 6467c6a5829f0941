package avro

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/iceberg-go"
	hamba "github.com/hamba/avro/v2"

	"github.com/minkhq/mink/codec/wire"
)

// Decoder decodes Avro binary values written with one writer schema into
// the columns of one table type. Use it in two steps, so that a record is
// never half-appended: Decode checks and converts the whole value into an
// internal tape, and only after it succeeded does Append copy it into the
// Arrow builders.
//
// A Decoder is not safe for concurrent use; it reuses its buffers, so
// steady-state decoding does not allocate.
type Decoder struct {
	root     *node
	isStruct bool // root is a record whose fields are the value columns

	in   []byte
	pos  int
	tape []entry
	json []byte // the JSON text of the value's recursive parts
	// zeroItems counts array and map items whose encoding may take no
	// bytes (empty records, fixed(0)): a corrupt count must not make a
	// value of unbounded size.
	zeroItems int
}

// maxZeroItems bounds zeroItems per value.
const maxZeroItems = 1 << 16

// Tape layout (positions index Decoder.tape):
//   - leaf: one entry (tNull, tNum, tBytes, tEnum or tPair);
//   - record: a tStruct header (i = end position), then, unless the node
//     is direct, one slot per table field (i = the position of its value,
//     or -1), then the values in writer order;
//   - array: a tList header (n = count, i = end), then the elements;
//   - map: a tMap header (n = count, i = end), then key, value pairs;
//   - complex union: a tUnion header (n = tag, i = end), then the value;
//   - a union with one non-null branch: the value, or tNull.
type entry struct {
	kind uint8
	n    int32
	off  int32
	i    int64
	hi   int64
}

const (
	tNull uint8 = iota + 1
	tNum
	tBytes // off, n locate the bytes in the payload
	tEnum  // i is the symbol's index
	tPair  // hi, i: a decimal's two halves, or a UUID's
	tStruct
	tList
	tMap
	tUnion
	tJSON // off, n locate the text in Decoder.json
)

// NewDecoder compiles a decoder from the writer schema s into target, the
// table's type for these values: the table's value columns as a
// *iceberg.StructType when Convert(s) is a struct, else the value
// column's type. (For a top-level union, Convert's struct of one field
// value and that field's type are both accepted.)
//
// target must be a superset of the writer, as schema evolution makes it:
// every writer field has a table field of the same name at the same path
// (matched by name, never by id or position) whose type is the same or an
// Iceberg promotion (int→long, float→double, decimal(P,S)→decimal(P',S)
// with P' ≥ P; Iceberg spec, "Schema Evolution"); the table may be
// optional where the writer is required, and may have more fields, which
// must be optional (they are null). Map values and list elements follow
// the same rules. Otherwise the error names the first mismatch, e.g.
// `field customer.id: writer string, table int`.
func NewDecoder(s *wire.Schema, target iceberg.Type) (*Decoder, error) {
	return NewDecoderFields(s, target, nil)
}

// NewDecoderFields is NewDecoder resolving the writer against what the
// table's version keeps of its reader schemas (Avro spec 1.12, "Schema
// Resolution"): a table field the writer lacks takes its default from
// fields (by the table's field id), and a writer field named as one of a
// table field's aliases fills that field. A default the column cannot
// hold exactly is an error naming the field.
func NewDecoderFields(s *wire.Schema, target iceberg.Type, fields Fields) (*Decoder, error) {
	w, err := parse(s)
	if err != nil {
		return nil, err
	}
	if target == nil {
		return nil, errors.New("avro: nil target type")
	}
	d := &Decoder{}
	c := &compiler{open: map[string]bool{}, fields: fields}
	switch w := w.(type) {
	case *hamba.RecordSchema:
		st, ok := target.(*iceberg.StructType)
		if !ok {
			return nil, fmt.Errorf("avro: writer record %s, table value column %s", w.FullName(), target)
		}
		wf := make([]field, len(w.Fields()))
		for i, f := range w.Fields() {
			wf[i] = field{f.Name(), f.Type()}
		}
		c.open[w.FullName()] = true
		d.root, err = c.compileRecord(wf, st, "")
		d.isStruct = true
	case *hamba.UnionSchema:
		// Convert wraps a top-level union in a struct of one field, value;
		// the value column's own type is accepted too.
		if st, ok := target.(*iceberg.StructType); ok && len(st.FieldList) == 1 && st.FieldList[0].Name == "value" {
			d.root, err = c.compileRecord([]field{{"value", w}}, st, "")
			d.isStruct = true
			break
		}
		d.root, err = c.compile(w, target, "value")
	default:
		d.root, err = c.compile(w, target, "value")
	}
	if err != nil {
		return nil, err
	}
	return d, nil
}

// Decode checks and converts one payload, the bytes after the wire header
// (Avro spec 1.12, "Binary Encoding"). On error nothing is kept for
// Append, and the error names the field path and the reason: truncated
// input, a varint longer than 10 bytes or out of range for an int,
// invalid UTF-8 in a string or map key, a boolean byte other than 0 or 1,
// an enum or union index out of range, a negative length or block count,
// a block byte size that does not match its items, a decimal wider than
// its precision, a string that is not a UUID, a time of day outside
// [0, 24 h), a timestamp whose microseconds overflow a long or whose
// nanoseconds are not a whole number of microseconds, and bytes after the
// value. It never panics.
//
// payload must not be modified until Append has been called: the tape
// points into it.
func (d *Decoder) Decode(payload []byte) error {
	d.in, d.pos, d.tape, d.zeroItems, d.json = payload, 0, d.tape[:0], 0, d.json[:0]
	if len(payload) > math.MaxInt32 { // the tape holds 32-bit offsets; Kafka's records are far smaller
		return fmt.Errorf("payload of %d bytes: larger than 2 GiB", len(payload))
	}
	if err := d.read(d.root); err != nil {
		d.tape = d.tape[:0]
		return err
	}
	if d.pos != len(d.in) {
		d.tape = d.tape[:0]
		return fmt.Errorf("%d bytes after the value (payload of %d bytes)", len(d.in)-d.pos, len(d.in))
	}
	return nil
}

func (d *Decoder) truncated(n *node) error {
	return fmt.Errorf("field %s: truncated payload at byte %d of %d", n.path, d.pos, len(d.in))
}

// readLong reads a zig-zag varint of at most 10 bytes. Most varints
// (union indexes, lengths, small numbers) are one byte: that path inlines.
func (d *Decoder) readLong(n *node) (int64, error) {
	if p := d.pos; p < len(d.in) && d.in[p] < 0x80 {
		d.pos = p + 1
		return int64(d.in[p]>>1) ^ -int64(d.in[p]&1), nil
	}
	return d.readLongSlow(n)
}

func (d *Decoder) readLongSlow(n *node) (int64, error) {
	var v uint64
	for s, i := uint(0), d.pos; i < len(d.in); s, i = s+7, i+1 {
		b := d.in[i]
		if s == 63 && b > 1 {
			return 0, fmt.Errorf("field %s: varint at byte %d overflows a long", n.path, d.pos)
		}
		v |= uint64(b&0x7f) << s
		if b < 0x80 {
			d.pos = i + 1
			return int64(v>>1) ^ -int64(v&1), nil
		}
	}
	d.pos = len(d.in)
	return 0, d.truncated(n)
}

func (d *Decoder) readInt(n *node) (int64, error) {
	v, err := d.readLong(n)
	if err == nil && (v < math.MinInt32 || v > math.MaxInt32) {
		return 0, fmt.Errorf("field %s: int %d out of range", n.path, v)
	}
	return v, err
}

// bytes reads a length-prefixed byte string and returns its offset.
func (d *Decoder) bytes(n *node) (int, int, error) {
	l, err := d.readLong(n)
	if err != nil {
		return 0, 0, err
	}
	if l < 0 {
		return 0, 0, fmt.Errorf("field %s: negative length %d", n.path, l)
	}
	if l > int64(len(d.in)-d.pos) {
		return 0, 0, d.truncated(n)
	}
	off := d.pos
	d.pos += int(l)
	return off, int(l), nil
}

func (d *Decoder) fixed(n *node, size int) (int, error) {
	if size > len(d.in)-d.pos {
		return 0, d.truncated(n)
	}
	off := d.pos
	d.pos += size
	return off, nil
}

func (d *Decoder) num(v int64) {
	d.tape = append(d.tape, entry{kind: tNum, i: v})
}

const (
	microsPerDay = 86_400_000_000
	millisPerDay = 86_400_000
)

// read reads one value of n onto the tape.
func (d *Decoder) read(n *node) error {
	switch n.op {
	case opBool:
		if d.pos >= len(d.in) {
			return d.truncated(n)
		}
		b := d.in[d.pos]
		if b > 1 {
			return fmt.Errorf("field %s: boolean byte 0x%02x, not 0 or 1", n.path, b)
		}
		d.pos++
		d.num(int64(b))
	case opInt, opIntLong, opDate:
		v, err := d.readInt(n)
		if err != nil {
			return err
		}
		d.num(v)
	case opTimeMillis:
		v, err := d.readInt(n)
		if err != nil {
			return err
		}
		if v < 0 || v >= millisPerDay {
			return fmt.Errorf("field %s: time-millis %d outside a day [0, %d)", n.path, v, millisPerDay)
		}
		d.num(v * 1000)
	case opLong:
		v, err := d.readLong(n)
		if err != nil {
			return err
		}
		d.num(v)
	case opTimeMicros:
		v, err := d.readLong(n)
		if err != nil {
			return err
		}
		if v < 0 || v >= microsPerDay {
			return fmt.Errorf("field %s: time-micros %d outside a day [0, %d)", n.path, v, microsPerDay)
		}
		d.num(v)
	case opTsMillis:
		v, err := d.readLong(n)
		if err != nil {
			return err
		}
		if v > math.MaxInt64/1000 || v < math.MinInt64/1000 {
			return fmt.Errorf("field %s: timestamp of %d ms overflows Iceberg's int64 microseconds", n.path, v)
		}
		d.num(v * 1000)
	case opTsNanos:
		v, err := d.readLong(n)
		if err != nil {
			return err
		}
		if v%1000 != 0 {
			return fmt.Errorf("field %s: timestamp of %d ns is not a whole number of microseconds (the column holds µs)", n.path, v)
		}
		d.num(v / 1000)
	case opFloat, opFloatDouble:
		if len(d.in)-d.pos < 4 {
			return d.truncated(n)
		}
		bits := binary.LittleEndian.Uint32(d.in[d.pos:])
		d.pos += 4
		if n.op == opFloat {
			d.num(int64(bits))
		} else {
			d.num(int64(math.Float64bits(float64(math.Float32frombits(bits)))))
		}
	case opDouble:
		if len(d.in)-d.pos < 8 {
			return d.truncated(n)
		}
		d.num(int64(binary.LittleEndian.Uint64(d.in[d.pos:])))
		d.pos += 8
	case opString:
		off, l, err := d.bytes(n)
		if err != nil {
			return err
		}
		if !utf8.Valid(d.in[off : off+l]) {
			return fmt.Errorf("field %s: string is not valid UTF-8", n.path)
		}
		d.tape = append(d.tape, entry{kind: tBytes, off: int32(off), n: int32(l)})
	case opUUIDString:
		off, l, err := d.bytes(n)
		if err != nil {
			return err
		}
		hi, lo, ok := parseUUID(d.in[off : off+l])
		if !ok {
			return fmt.Errorf("field %s: %q is not a UUID (8-4-4-4-12 hex digits)", n.path, truncate(d.in[off:off+l]))
		}
		d.tape = append(d.tape, entry{kind: tPair, hi: int64(hi), i: int64(lo)})
	case opBytes:
		off, l, err := d.bytes(n)
		if err != nil {
			return err
		}
		d.tape = append(d.tape, entry{kind: tBytes, off: int32(off), n: int32(l)})
	case opDecimalBytes, opDecimalFixed:
		var off, l int
		var err error
		if n.op == opDecimalBytes {
			off, l, err = d.bytes(n)
		} else {
			l = n.size
			off, err = d.fixed(n, l)
		}
		if err != nil {
			return err
		}
		v, err := decimal(d.in[off:off+l], n.prec)
		if err != nil {
			return fmt.Errorf("field %s: %w", n.path, err)
		}
		d.tape = append(d.tape, entry{kind: tPair, hi: v.HighBits(), i: int64(v.LowBits())})
	case opFixed, opUUIDFixed:
		off, err := d.fixed(n, n.size)
		if err != nil {
			return err
		}
		d.tape = append(d.tape, entry{kind: tBytes, off: int32(off), n: int32(n.size)})
	case opEnum:
		v, err := d.readInt(n)
		if err != nil {
			return err
		}
		if v < 0 || v >= int64(len(n.symbols)) {
			return fmt.Errorf("field %s: enum index %d out of range [0, %d)", n.path, v, len(n.symbols))
		}
		d.tape = append(d.tape, entry{kind: tEnum, i: v})
	case opRecord:
		return d.record(n)
	case opJSON:
		start := len(d.json)
		var err error
		if d.json, err = d.jsonText(d.json, n.schema, n, 0); err != nil {
			return err
		}
		d.tape = append(d.tape, entry{kind: tJSON, off: int32(start), n: int32(len(d.json) - start)})
	case opArray, opMap:
		return d.blocks(n)
	case opUnion:
		var v int64
		if p := d.pos; p < len(d.in) && d.in[p] < 0x80 { // readLong's fast path, which does not inline
			v, d.pos = int64(d.in[p]>>1)^-int64(d.in[p]&1), p+1
		} else {
			var err error
			if v, err = d.readLongSlow(n); err != nil {
				return err
			}
		}
		if v < 0 || v >= int64(len(n.branches)) {
			return fmt.Errorf("field %s: union index %d out of range [0, %d)", n.path, v, len(n.branches))
		}
		b := n.branches[v]
		if b == nil {
			d.tape = append(d.tape, entry{kind: tNull})
			return nil
		}
		if n.app != aUnion {
			return d.read(b)
		}
		h := len(d.tape)
		d.tape = append(d.tape, entry{kind: tUnion, n: int32(n.tags[v])})
		if err := d.read(b); err != nil {
			return err
		}
		d.tape[h].i = int64(len(d.tape))
	}
	return nil
}

func (d *Decoder) record(n *node) error {
	h := len(d.tape)
	d.tape = append(d.tape, entry{kind: tStruct})
	if !n.direct {
		for range n.ntable {
			d.tape = append(d.tape, entry{kind: tNum, i: -1})
		}
	}
	for _, f := range n.fields {
		if !n.direct {
			d.tape[h+1+f.slot].i = int64(len(d.tape))
		}
		if err := d.read(f); err != nil {
			return err
		}
	}
	d.tape[h].i = int64(len(d.tape))
	return nil
}

// blocks reads an array or map: blocks of a count and that many items,
// ended by a count of 0; a negative count -c is followed by the block's
// size in bytes (Avro spec 1.12, "Arrays", "Maps").
func (d *Decoder) blocks(n *node) error {
	h := len(d.tape)
	kind := tList
	if n.op == opMap {
		kind = tMap
	}
	d.tape = append(d.tape, entry{kind: kind})
	items := int64(0)
	minSize := n.elem.minSize
	if n.op == opMap {
		minSize++ // the key's length
	}
	for {
		c, err := d.readLong(n)
		if err != nil {
			return err
		}
		if c == 0 {
			break
		}
		size, start := int64(-1), 0
		if c < 0 {
			if c == math.MinInt64 {
				return fmt.Errorf("field %s: block count %d out of range", n.path, c)
			}
			c = -c
			if size, err = d.readLong(n); err != nil {
				return err
			}
			if size < 0 || size > int64(len(d.in)-d.pos) {
				return fmt.Errorf("field %s: block size %d bytes does not fit the %d bytes left", n.path, size, len(d.in)-d.pos)
			}
			start = d.pos
		}
		// Every item takes minSize bytes; items of no size are bounded
		// per value. Either way a corrupt count fails before it costs.
		if minSize > 0 {
			if c > int64((len(d.in)-d.pos)/minSize) {
				return fmt.Errorf("field %s: block of %d items longer than the %d bytes left", n.path, c, len(d.in)-d.pos)
			}
		} else if d.zeroItems += int(min(c, maxZeroItems+1)); d.zeroItems > maxZeroItems {
			return fmt.Errorf("field %s: more than %d items of no size", n.path, maxZeroItems)
		}
		for range c {
			if n.op == opMap {
				off, l, err := d.bytes(n)
				if err != nil {
					return err
				}
				if !utf8.Valid(d.in[off : off+l]) {
					return fmt.Errorf("field %s: map key is not valid UTF-8", n.path)
				}
				d.tape = append(d.tape, entry{kind: tBytes, off: int32(off), n: int32(l)})
			}
			if err := d.read(n.elem); err != nil {
				return err
			}
		}
		if size >= 0 && int64(d.pos-start) != size {
			return fmt.Errorf("field %s: block size %d bytes, its items take %d", n.path, size, d.pos-start)
		}
		items += c
		if items > math.MaxInt32 {
			return fmt.Errorf("field %s: more than %d items", n.path, math.MaxInt32)
		}
	}
	d.tape[h].n, d.tape[h].i = int32(items), int64(len(d.tape))
	return nil
}

// decimal reads a big-endian two's complement unscaled value (Avro spec
// 1.12, "Decimal") and checks it has at most prec digits.
func decimal(b []byte, prec int32) (decimal128.Num, error) {
	if len(b) == 0 {
		return decimal128.Num{}, errors.New("decimal of no bytes")
	}
	neg := b[0]&0x80 != 0
	if len(b) > 16 {
		// Longer than 128 bits: the extra bytes must be sign extension.
		ext := byte(0)
		if neg {
			ext = 0xff
		}
		for _, x := range b[:len(b)-16] {
			if x != ext {
				return decimal128.Num{}, fmt.Errorf("decimal of %d bytes exceeds precision %d", len(b), prec)
			}
		}
		b = b[len(b)-16:]
		if (b[0]&0x80 != 0) != neg {
			return decimal128.Num{}, fmt.Errorf("decimal exceeds precision %d", prec)
		}
	}
	var buf [16]byte
	if neg {
		buf = [16]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	}
	copy(buf[16-len(b):], b)
	v := decimal128.New(int64(binary.BigEndian.Uint64(buf[:8])), binary.BigEndian.Uint64(buf[8:]))
	// -2^127 has no absolute value in 128 bits (FitsInPrecision would
	// take it for small); it has 39 digits.
	if v.HighBits() == math.MinInt64 && v.LowBits() == 0 || !v.FitsInPrecision(prec) {
		return decimal128.Num{}, fmt.Errorf("unscaled decimal %s has more than %d digits", v.BigInt(), prec)
	}
	return v, nil
}

// parseUUID parses the 8-4-4-4-12 hex form (RFC 9562, either case).
func parseUUID(s []byte) (hi, lo uint64, ok bool) {
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return 0, 0, false
	}
	var v [2]uint64
	k := 0
	for i, c := range s {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			continue
		}
		var x byte
		switch {
		case '0' <= c && c <= '9':
			x = c - '0'
		case 'a' <= c && c <= 'f':
			x = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			x = c - 'A' + 10
		default:
			return 0, 0, false
		}
		v[k/16] = v[k/16]<<4 | uint64(x)
		k++
	}
	return v[0], v[1], true
}

// truncate shortens a quoted value in an error.
func truncate(b []byte) []byte {
	if len(b) > 64 {
		return b[:64]
	}
	return b
}

// Append appends the last successfully decoded value to cols: for a
// struct target one builder per table field in order (the value columns),
// else exactly one builder, built by iceberg-go's
// table.SchemaToArrowSchema (no large types). Call it only after Decode
// returned nil, before the next Decode. It panics if a builder does not
// match its column, which is a programming error.
func (d *Decoder) Append(cols []array.Builder) {
	if !d.isStruct {
		d.value(d.root, cols[0], 0)
		return
	}
	n := d.root
	if n.direct {
		q := 1
		for i, f := range n.fields {
			q = d.value(f, cols[i], q)
		}
		return
	}
	for j, f := range n.table {
		slot := d.tape[1+j].i
		if f == nil {
			n.absent(j, cols[j])
			continue
		}
		d.value(f, cols[j], int(slot))
	}
}

// absent appends the value of table field j of record n, which the
// writer lacks: its default, or null.
func (n *node) absent(j int, b array.Builder) {
	if n.defaults == nil || n.defaults[j] == nil {
		b.AppendNull()
		return
	}
	c := n.defaults[j]
	c.value(c.root, b, 0)
}

func (d *Decoder) bytesOf(e *entry) []byte {
	return d.in[e.off : e.off+e.n]
}

// value appends the tape value at q to b and returns the position after it.
func (d *Decoder) value(n *node, b array.Builder, q int) int {
	e := &d.tape[q]
	if e.kind == tNull {
		b.AppendNull()
		return q + 1
	}
	if n.op == opUnion && n.app != aUnion {
		// A union with one non-null branch: the tape holds the branch.
		for _, br := range n.branches {
			if br != nil {
				return d.value(br, b, q)
			}
		}
	}
	switch n.app {
	case aBool:
		b.(*array.BooleanBuilder).Append(e.i != 0)
	case aInt32:
		b.(*array.Int32Builder).Append(int32(e.i))
	case aInt64:
		b.(*array.Int64Builder).Append(e.i)
	case aFloat32:
		b.(*array.Float32Builder).Append(math.Float32frombits(uint32(e.i)))
	case aFloat64:
		b.(*array.Float64Builder).Append(math.Float64frombits(uint64(e.i)))
	case aDate:
		b.(*array.Date32Builder).Append(arrow.Date32(e.i))
	case aTime:
		b.(*array.Time64Builder).Append(arrow.Time64(e.i))
	case aTimestamp:
		b.(*array.TimestampBuilder).Append(arrow.Timestamp(e.i))
	case aString:
		switch e.kind {
		case tEnum:
			b.(*array.StringBuilder).BinaryBuilder.Append(n.symbols[e.i])
		case tJSON:
			b.(*array.StringBuilder).BinaryBuilder.Append(d.json[e.off : e.off+e.n])
		default:
			b.(*array.StringBuilder).BinaryBuilder.Append(d.bytesOf(e))
		}
	case aBinary:
		b.(*array.BinaryBuilder).Append(d.bytesOf(e))
	case aFixed:
		b.(*array.FixedSizeBinaryBuilder).Append(d.bytesOf(e))
	case aUUID:
		var u [16]byte
		if e.kind == tBytes {
			copy(u[:], d.bytesOf(e))
		} else {
			binary.BigEndian.PutUint64(u[:8], uint64(e.hi))
			binary.BigEndian.PutUint64(u[8:], uint64(e.i))
		}
		b.(*extensions.UUIDBuilder).AppendBytes(u)
	case aDecimal:
		b.(*array.Decimal128Builder).Append(decimal128.New(e.hi, uint64(e.i)))
	case aStruct:
		sb := b.(*array.StructBuilder)
		sb.Append(true)
		if n.direct {
			r := q + 1
			for i, f := range n.fields {
				r = d.value(f, sb.FieldBuilder(i), r)
			}
			return r
		}
		for j, f := range n.table {
			if f == nil {
				n.absent(j, sb.FieldBuilder(j))
				continue
			}
			d.value(f, sb.FieldBuilder(j), int(d.tape[q+1+j].i))
		}
		return int(e.i)
	case aList:
		lb := b.(*array.ListBuilder)
		lb.Append(true)
		vb := lb.ValueBuilder()
		r := q + 1
		for range e.n {
			r = d.value(n.elem, vb, r)
		}
		return int(e.i)
	case aMap:
		mb := b.(*array.MapBuilder)
		mb.Append(true)
		kb := mb.KeyBuilder().(*array.StringBuilder)
		ib := mb.ItemBuilder()
		r := q + 1
		for range e.n {
			kb.BinaryBuilder.Append(d.bytesOf(&d.tape[r]))
			r = d.value(n.elem, ib, r+1)
		}
		return int(e.i)
	case aUnion:
		sb := b.(*array.StructBuilder)
		sb.Append(true)
		tag := int(e.n)
		for j := range n.tableFields {
			switch j {
			case n.tagPos:
				sb.FieldBuilder(j).(*array.Int32Builder).Append(int32(tag))
			case n.tagField[tag]:
				d.value(n.branchOf(tag), sb.FieldBuilder(j), q+1)
			default:
				sb.FieldBuilder(j).AppendNull()
			}
		}
		return int(e.i)
	}
	return q + 1
}

// branchOf returns the writer branch of a complex union's tag.
func (n *node) branchOf(tag int) *node {
	for i, b := range n.branches {
		if b != nil && n.tags[i] == tag {
			return b
		}
	}
	return nil
}
