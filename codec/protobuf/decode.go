package protobuf

import (
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/apache/iceberg-go"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/minkhq/mink/codec/wire"
)

// Decoder decodes Protobuf payloads written with one writer schema into
// the value columns of one table type. Use it in two steps, so that a
// record is never half-appended: Decode checks and converts the whole
// payload into an internal buffer, then Append copies it into the Arrow
// builders.
//
// Not safe for concurrent use; it reuses its buffers, so steady-state
// decoding does not allocate.
type Decoder struct {
	root    *msgPlan
	payload []byte
	slots   []slot // message frames: one slot per target field
	elems   []elem // list elements and map entries
	unknown int
	ok      bool
	strKeys map[string]int32 // map key de-duplication, reused
	numKeys map[uint64]int32
	scratch []byte
	texts   []jsonText // rJSON values, rendered after the whole payload
	text    []byte     // their JSON, one after the other
}

// jsonText is one rJSON value: where its message is in the payload (given
// more than once, every occurrence, which are merged in order) and, once
// rendered, where its JSON is in Decoder.text.
type jsonText struct {
	f          *field
	md         protoreflect.MessageDescriptor
	i, j       int   // the first occurrence in the payload
	more       []int // the bounds of each later occurrence, in pairs
	start, end int   // rendered: Decoder.text[start:end]
}

// addText keeps the message bytes payload[i:j] of an rJSON value and
// returns its index.
func (d *Decoder) addText(f *field, v *vnode, i, j int) uint64 {
	d.texts = append(d.texts, jsonText{f: f, md: v.md, i: i, j: j})
	return uint64(len(d.texts) - 1)
}

// mergeText adds another occurrence payload[i:j] to the rJSON value x.
func (d *Decoder) mergeText(x uint64, i, j int) {
	t := &d.texts[x]
	t.more = append(t.more, i, j)
}

// val is one decoded value; see reader for what u and n hold.
type val struct {
	u uint64
	n uint32
}

type slot struct {
	v          val
	set        bool
	head, tail int32 // elements (index+1; 0: none)
	count      int32
}

type elem struct {
	k, v val
	next int32 // index+1; 0: last
	drop bool  // a map entry whose key came again later
}

// NewDecoder compiles a decoder from the writer schema s, at the message
// index path indexes, into target: the table's value columns as a
// *iceberg.StructType (Convert(s, indexes) or a schema evolved from it).
//
// Every writer field must have a target field of the same name at the
// same path whose type is the writer's or an Iceberg promotion of it
// (int→long, float→double, decimal(P,S)→decimal(P',S) with P'≥P); a
// target field may be optional where the writer's is required; target
// fields the writer lacks must be optional and read as null. Errors name
// the first mismatch, e.g. `field customer.id: writer string, table int`,
// and Convert's refusals.
func NewDecoder(s *wire.Schema, indexes []int, target iceberg.Type) (*Decoder, error) {
	md, err := message(s, indexes)
	if err != nil {
		return nil, err
	}
	st, ok := target.(*iceberg.StructType)
	if !ok {
		return nil, fmt.Errorf("protobuf: message %s needs a struct target, not %s", md.FullName(), target)
	}
	c := compiler{}
	root, err := c.message(md, st, "")
	if err != nil {
		return nil, err
	}
	return &Decoder{root: root}, nil
}

// Unknown is the number of fields of the last decoded payload, at any
// depth, whose field number the writer schema does not define (skipped,
// Protobuf spec "Unknown fields"); a field inside an unknown one is not
// counted again.
func (d *Decoder) Unknown() int { return d.unknown }

// Decode checks and converts one payload (the bytes after the wire header
// and the message indexes). On error nothing is kept for Append and the
// error names the field path and why: truncated or invalid input, a wire
// type other than the field's, invalid UTF-8 in a string, a value out of
// range for its type, a Timestamp or Duration that is not a whole number
// of microseconds in the int64 range, a missing proto2 required field, a
// value held as JSON text that has no JSON form (a Value with no kind set,
// a NaN Value number; json.go).
//
// A non-repeated field given twice takes the last value, and an embedded
// message given twice is merged (Protobuf spec, "Last One Wins"); a map
// key given twice keeps the last entry. payload must not be modified
// until Append: strings and bytes are copied from it then.
func (d *Decoder) Decode(payload []byte) error {
	d.ok = false
	d.unknown = 0
	d.payload = payload
	d.slots = d.slots[:0]
	d.elems = d.elems[:0]
	clear(d.texts) // drop the references to payloads
	d.texts, d.text = d.texts[:0], d.text[:0]
	base := d.frame(d.root)
	if err := d.message(d.root, 0, len(payload), base); err != nil {
		return err
	}
	if d.root.needCheck {
		if err := d.check(d.root, base); err != nil {
			return err
		}
	}
	if d.root.hasJSON {
		if err := d.renderAll(d.root, base); err != nil {
			return err
		}
	}
	d.ok = true
	return nil
}

// frame allocates the slots of one message and returns the first.
func (d *Decoder) frame(m *msgPlan) int {
	base := len(d.slots)
	n := base + len(m.fields)
	if n <= cap(d.slots) {
		d.slots = d.slots[:n]
		clear(d.slots[base:])
	} else {
		d.slots = append(d.slots, make([]slot, len(m.fields))...)
	}
	return base
}

func (d *Decoder) addElem(s int, e elem) int {
	d.elems = append(d.elems, e)
	i := int32(len(d.elems))
	sl := &d.slots[s]
	if sl.tail == 0 {
		sl.head = i
	} else {
		d.elems[sl.tail-1].next = i
	}
	sl.tail = i
	sl.count++
	return int(i - 1)
}

func msgErr(m *msgPlan, format string, args ...any) error {
	if m.path == "" {
		return fmt.Errorf("message %s: %s", m.name, fmt.Sprintf(format, args...))
	}
	return fmt.Errorf("field %s: %s", m.path, fmt.Sprintf(format, args...))
}

func fieldErr(f *field, format string, args ...any) error {
	return fmt.Errorf("field %s: %s", f.path, fmt.Sprintf(format, args...))
}

func wireErr(f *field, got protowire.Type, want protowire.Type) error {
	return fieldErr(f, "wire type %s, want %s", wireName(got), wireName(want))
}

func wireName(t protowire.Type) string {
	switch t {
	case protowire.VarintType:
		return "varint (0)"
	case protowire.Fixed64Type:
		return "i64 (1)"
	case protowire.BytesType:
		return "len (2)"
	case protowire.StartGroupType:
		return "group start (3)"
	case protowire.EndGroupType:
		return "group end (4)"
	case protowire.Fixed32Type:
		return "i32 (5)"
	}
	return fmt.Sprintf("invalid (%d)", t)
}

// message decodes the payload bytes [i, end) as message m into the frame
// at base, merging with what the frame already holds.
func (d *Decoder) message(m *msgPlan, i, end, base int) error {
	p := d.payload
	for i < end {
		num, typ, n := consumeTag(p[i:end])
		if n < 0 {
			return msgErr(m, "tag at byte %d: %v", i, parseErr(n))
		}
		i += n
		fi := m.lookup(num)
		if fi < 0 {
			n = protowire.ConsumeFieldValue(num, typ, p[i:end])
			if n < 0 {
				return msgErr(m, "unknown field %d at byte %d: %v", num, i, parseErr(n))
			}
			i += n
			d.unknown++
			continue
		}
		f := m.fields[fi]
		s := base + fi
		var err error
		switch f.card {
		case cSingle:
			if typ != f.val.wt {
				return wireErr(f, typ, f.val.wt)
			}
			if f.oneof >= 0 {
				for _, j := range m.oneofs[f.oneof] {
					if j != fi {
						d.slots[base+j].set = false
					}
				}
			}
			i, err = d.single(f, s, i, end)
		case cList:
			i, err = d.list(f, s, typ, i, end)
		case cMap:
			if typ != protowire.BytesType {
				return wireErr(f, typ, protowire.BytesType)
			}
			i, err = d.mapEntry(f, s, i, end)
		}
		if err != nil {
			return err
		}
	}
	if !m.hasMap {
		return nil
	}
	for fi, f := range m.fields {
		if f.card == cMap && d.slots[base+fi].count > 1 {
			d.dedupe(f, base+fi)
		}
	}
	return nil
}

// consumeTag is protowire.ConsumeTag with the one-byte tags (field
// numbers 1-15) inline, most tags of most messages, and field numbers
// above 2^29-1 refused, as protobuf-go's parser does.
func consumeTag(b []byte) (protowire.Number, protowire.Type, int) {
	if len(b) > 0 && b[0] < 0x80 && b[0]>>3 != 0 {
		return protowire.Number(b[0] >> 3), protowire.Type(b[0] & 7), 1
	}
	num, typ, n := protowire.ConsumeTag(b)
	if n >= 0 && num > protowire.MaxValidNumber {
		return 0, 0, errFieldNumber
	}
	return num, typ, n
}

// parseErr names protowire's error codes: protowire.ParseError's texts
// carry a prefix that protobuf-go varies on purpose, which would make a
// dead letter's reason differ between builds.
func parseErr(n int) string {
	switch n {
	case -1:
		return "unexpected EOF"
	case errFieldNumber:
		return "invalid field number"
	case -3:
		return "varint longer than 10 bytes"
	case -4:
		return "reserved wire type"
	case -5:
		return "mismatched group end"
	case -6:
		return "groups nested too deep"
	}
	return fmt.Sprintf("invalid input (code %d)", n)
}

// errFieldNumber is protowire's error code of an invalid field number
// (protowire.ParseError(-2): "invalid field number").
const errFieldNumber = -2

// consumeVarint is protowire.ConsumeVarint with one-byte values inline.
func consumeVarint(b []byte) (uint64, int) {
	if len(b) > 0 && b[0] < 0x80 {
		return uint64(b[0]), 1
	}
	return protowire.ConsumeVarint(b)
}

// bytesAt reads a length-delimited value at i and returns its bounds.
func (d *Decoder) bytesAt(f *field, i, end int) (int, int, error) {
	l, n := consumeVarint(d.payload[i:end])
	if n < 0 {
		return 0, 0, fieldErr(f, "length at byte %d: %v", i, parseErr(n))
	}
	i += n
	if l > uint64(end-i) {
		return 0, 0, fieldErr(f, "length %d at byte %d runs past the end (%d bytes left)", l, i-n, end-i)
	}
	return i, i + int(l), nil
}

// msgAt reads a message-typed value of v at i (after its tag) and returns
// the bounds of its content and where the next field starts: after a
// length for a length-delimited message, after the end tag for a group
// (proto2) or delimited message (editions).
func (d *Decoder) msgAt(f *field, v *vnode, i, end int) (int, int, int, error) {
	if v.wt != protowire.StartGroupType {
		j, k, err := d.bytesAt(f, i, end)
		return j, k, k, err
	}
	content, n := protowire.ConsumeGroup(f.num, d.payload[i:end])
	if n < 0 {
		return 0, 0, 0, fieldErr(f, "group at byte %d: %v", i, parseErr(n))
	}
	return i, i + len(content), i + n, nil
}

func (d *Decoder) single(f *field, s, i, end int) (int, error) {
	v := &f.val
	switch v.r {
	case rMessage:
		j, k, next, err := d.msgAt(f, v, i, end)
		if err != nil {
			return 0, err
		}
		if !d.slots[s].set {
			b := d.frame(v.msg)
			d.slots[s].v = val{u: uint64(b)}
			d.slots[s].set = true
		}
		return next, d.message(v.msg, j, k, int(d.slots[s].v.u))
	case rMarker:
		j, k, next, err := d.msgAt(f, v, i, end)
		if err != nil {
			return 0, err
		}
		if err := d.skipFields(f, j, k); err != nil {
			return 0, err
		}
		d.slots[s].v, d.slots[s].set = val{u: 1}, true
		return next, nil
	case rJSON:
		j, k, next, err := d.msgAt(f, v, i, end)
		if err != nil {
			return 0, err
		}
		if d.slots[s].set {
			d.mergeText(d.slots[s].v.u, j, k)
		} else {
			d.slots[s].v, d.slots[s].set = val{u: d.addText(f, v, j, k)}, true
		}
		return next, nil
	case rTimestamp, rDuration, rWrapper:
		j, k, next, err := d.msgAt(f, v, i, end)
		if err != nil {
			return 0, err
		}
		cur := val{}
		if d.slots[s].set {
			cur = d.slots[s].v
		}
		if cur, err = d.wellKnown(f, v, j, k, cur); err != nil {
			return 0, err
		}
		d.slots[s].v, d.slots[s].set = cur, true
		return next, nil
	}
	x, n, err := d.scalar(f, v.r, i, end)
	if err != nil {
		return 0, err
	}
	d.slots[s].v, d.slots[s].set = x, true
	return i + n, nil
}

func (d *Decoder) list(f *field, s int, typ protowire.Type, i, end int) (int, error) {
	v := &f.val
	if typ == protowire.BytesType && f.packable {
		j, k, err := d.bytesAt(f, i, end)
		if err != nil {
			return 0, err
		}
		for j < k {
			x, n, err := d.scalar(f, v.r, j, k)
			if err != nil {
				return 0, err
			}
			d.addElem(s, elem{v: x})
			j += n
		}
		return k, nil
	}
	if typ != v.wt {
		return 0, wireErr(f, typ, v.wt)
	}
	switch v.r {
	case rMessage:
		j, k, next, err := d.msgAt(f, v, i, end)
		if err != nil {
			return 0, err
		}
		b := d.frame(v.msg)
		d.addElem(s, elem{v: val{u: uint64(b)}})
		return next, d.message(v.msg, j, k, b)
	case rMarker:
		j, k, next, err := d.msgAt(f, v, i, end)
		if err != nil {
			return 0, err
		}
		if err := d.skipFields(f, j, k); err != nil {
			return 0, err
		}
		d.addElem(s, elem{v: val{u: 1}})
		return next, nil
	case rJSON:
		j, k, next, err := d.msgAt(f, v, i, end)
		if err != nil {
			return 0, err
		}
		d.addElem(s, elem{v: val{u: d.addText(f, v, j, k)}})
		return next, nil
	case rTimestamp, rDuration, rWrapper:
		j, k, next, err := d.msgAt(f, v, i, end)
		if err != nil {
			return 0, err
		}
		x, err := d.wellKnown(f, v, j, k, val{})
		if err != nil {
			return 0, err
		}
		d.addElem(s, elem{v: x})
		return next, nil
	}
	x, n, err := d.scalar(f, v.r, i, end)
	if err != nil {
		return 0, err
	}
	d.addElem(s, elem{v: x})
	return i + n, nil
}

// mapEntry decodes one map entry (a message with the key as field 1 and
// the value as field 2; either may be absent and reads as its zero value).
func (d *Decoder) mapEntry(f *field, s, i, end int) (int, error) {
	j, k, err := d.bytesAt(f, i, end)
	if err != nil {
		return 0, err
	}
	var e elem
	hasMsg := false
	p := d.payload
	for j < k {
		num, typ, n := protowire.ConsumeTag(p[j:k])
		if n < 0 {
			return 0, fieldErr(f, "map entry tag at byte %d: %v", j, parseErr(n))
		}
		j += n
		var v *vnode
		switch num {
		case 1:
			v = &f.key
		case 2:
			v = &f.val
		default:
			n = protowire.ConsumeFieldValue(num, typ, p[j:k])
			if n < 0 {
				return 0, fieldErr(f, "unknown map entry field %d at byte %d: %v", num, j, parseErr(n))
			}
			j += n
			d.unknown++
			continue
		}
		if typ != v.wt {
			return 0, fieldErr(f, "map entry field %d: wire type %s, want %s", num, wireName(typ), wireName(v.wt))
		}
		switch v.r {
		case rMessage:
			a, b, err := d.bytesAt(f, j, k)
			if err != nil {
				return 0, err
			}
			if !hasMsg {
				e.v, hasMsg = val{u: uint64(d.frame(v.msg))}, true
			}
			if err := d.message(v.msg, a, b, int(e.v.u)); err != nil {
				return 0, err
			}
			j = b
		case rMarker:
			a, b, err := d.bytesAt(f, j, k)
			if err != nil {
				return 0, err
			}
			if err := d.skipFields(f, a, b); err != nil {
				return 0, err
			}
			j = b
		case rJSON:
			a, b, err := d.bytesAt(f, j, k)
			if err != nil {
				return 0, err
			}
			if hasMsg {
				d.mergeText(e.v.u, a, b)
			} else {
				e.v, hasMsg = val{u: d.addText(f, v, a, b)}, true
			}
			j = b
		case rTimestamp, rDuration, rWrapper:
			a, b, err := d.bytesAt(f, j, k)
			if err != nil {
				return 0, err
			}
			if e.v, err = d.wellKnown(f, v, a, b, e.v); err != nil {
				return 0, err
			}
			j = b
		default:
			x, n, err := d.scalar(f, v.r, j, k)
			if err != nil {
				return 0, err
			}
			if num == 1 {
				e.k = x
			} else {
				e.v = x
			}
			j += n
		}
	}
	switch {
	case f.val.r == rMessage && !hasMsg:
		e.v = val{u: uint64(d.frame(f.val.msg))} // an empty message
	case f.val.r == rJSON && !hasMsg:
		e.v = val{u: d.addText(f, &f.val, k, k)} // an empty message
	case f.val.r == rMarker:
		e.v = val{u: 1} // present, even when not on the wire
	}
	d.addElem(s, e)
	return k, nil
}

// skipFields checks that payload[i:end] is a sequence of fields and
// counts them as unknown: the content of a message without fields.
func (d *Decoder) skipFields(f *field, i, end int) error {
	p := d.payload
	for i < end {
		num, typ, n := consumeTag(p[i:end])
		if n < 0 {
			return fieldErr(f, "tag at byte %d: %v", i, parseErr(n))
		}
		i += n
		n = protowire.ConsumeFieldValue(num, typ, p[i:end])
		if n < 0 {
			return fieldErr(f, "unknown field %d at byte %d: %v", num, i, parseErr(n))
		}
		i += n
		d.unknown++
	}
	return nil
}

// dedupe drops the map entries whose key comes again later: Protobuf
// parsers keep the last (Protobuf spec, "Maps").
func (d *Decoder) dedupe(f *field, s int) {
	str := f.key.r == rString
	sl := d.slots[s]
	if sl.count <= 16 {
		for i := sl.head; i != 0; i = d.elems[i-1].next {
			a := &d.elems[i-1]
			if a.drop {
				continue
			}
			for j := a.next; j != 0; j = d.elems[j-1].next {
				b := &d.elems[j-1]
				if !b.drop && d.sameKey(str, a.k, b.k) {
					a.drop = true
					break
				}
			}
		}
		return
	}
	// Walk from the first entry; a key seen before drops the earlier entry.
	if str {
		if d.strKeys == nil {
			d.strKeys = map[string]int32{}
		}
		clear(d.strKeys)
	} else {
		if d.numKeys == nil {
			d.numKeys = map[uint64]int32{}
		}
		clear(d.numKeys)
	}
	for i := sl.head; i != 0; i = d.elems[i-1].next {
		e := &d.elems[i-1]
		if e.drop {
			continue
		}
		var prev int32
		var ok bool
		if str {
			kb := d.payload[e.k.u : e.k.u+uint64(e.k.n)]
			prev, ok = d.strKeys[string(kb)]
			d.strKeys[string(kb)] = i
		} else {
			prev, ok = d.numKeys[e.k.u]
			d.numKeys[e.k.u] = i
		}
		if ok {
			d.elems[prev-1].drop = true
		}
	}
}

func (d *Decoder) sameKey(str bool, a, b val) bool {
	if !str {
		return a.u == b.u
	}
	return a.n == b.n && string(d.payload[a.u:a.u+uint64(a.n)]) == string(d.payload[b.u:b.u+uint64(b.n)])
}

// scalar reads one value of a scalar kind at i.
func (d *Decoder) scalar(f *field, r reader, i, end int) (val, int, error) {
	b := d.payload[i:end]
	switch r {
	case rInt32, rInt64, rUint32, rUint64, rSint32, rSint64, rBool, rEnum:
		x, n := consumeVarint(b)
		if n < 0 {
			return val{}, 0, fieldErr(f, "varint at byte %d: %v", i, parseErr(n))
		}
		switch r {
		case rInt32, rEnum:
			if int64(x) != int64(int32(x)) {
				return val{}, 0, fieldErr(f, "value %d out of range for int32", int64(x))
			}
		case rUint32:
			if x > math.MaxUint32 {
				return val{}, 0, fieldErr(f, "value %d out of range for uint32", x)
			}
		case rSint32:
			z := protowire.DecodeZigZag(x)
			if z != int64(int32(z)) {
				return val{}, 0, fieldErr(f, "value %d out of range for sint32", z)
			}
			x = uint64(z)
		case rSint64:
			x = uint64(protowire.DecodeZigZag(x))
		case rBool:
			x = protowire.EncodeBool(protowire.DecodeBool(x))
		}
		return val{u: x}, n, nil
	case rFixed32, rSfixed32, rFloat:
		x, n := protowire.ConsumeFixed32(b)
		if n < 0 {
			return val{}, 0, fieldErr(f, "fixed32 at byte %d: %v", i, parseErr(n))
		}
		if r == rSfixed32 {
			return val{u: uint64(int64(int32(x)))}, n, nil
		}
		return val{u: uint64(x)}, n, nil
	case rFixed64, rSfixed64, rDouble:
		x, n := protowire.ConsumeFixed64(b)
		if n < 0 {
			return val{}, 0, fieldErr(f, "fixed64 at byte %d: %v", i, parseErr(n))
		}
		return val{u: x}, n, nil
	case rString, rBytes:
		j, k, err := d.bytesAt(f, i, end)
		if err != nil {
			return val{}, 0, err
		}
		if r == rString && !utf8.Valid(d.payload[j:k]) {
			return val{}, 0, fieldErr(f, "string at byte %d is not valid UTF-8", j)
		}
		return val{u: uint64(j), n: uint32(k - j)}, k - i, nil
	}
	return val{}, 0, fieldErr(f, "reader %d is not a scalar", r)
}

// wellKnown decodes a Timestamp, Duration or wrapper message in [i, end)
// over cur (its value so far: merging).
func (d *Decoder) wellKnown(f *field, v *vnode, i, end int, cur val) (val, error) {
	p := d.payload
	for i < end {
		num, typ, n := consumeTag(p[i:end])
		if n < 0 {
			return val{}, fieldErr(f, "tag at byte %d: %v", i, parseErr(n))
		}
		i += n
		known := num == 1 || (num == 2 && v.r != rWrapper)
		if !known {
			n = protowire.ConsumeFieldValue(num, typ, p[i:end])
			if n < 0 {
				return val{}, fieldErr(f, "unknown field %d at byte %d: %v", num, i, parseErr(n))
			}
			i += n
			d.unknown++
			continue
		}
		r := v.inner
		if v.r != rWrapper {
			r = rInt64 // seconds
			if num == 2 {
				r = rInt32 // nanos
			}
		}
		wt := wireOf(r)
		if typ != wt {
			return val{}, fieldErr(f, "field %d: wire type %s, want %s", num, wireName(typ), wireName(wt))
		}
		x, n, err := d.scalar(f, r, i, end)
		if err != nil {
			return val{}, err
		}
		i += n
		switch {
		case v.r == rWrapper:
			cur = x
		case num == 1:
			cur.u = x.u
		default:
			cur.n = uint32(x.u)
		}
	}
	switch v.r {
	case rTimestamp:
		nanos := int32(cur.n)
		if nanos < 0 || nanos > 999_999_999 {
			return val{}, fieldErr(f, "timestamp nanos %d outside 0..999999999", nanos)
		}
		if _, ok := micros(int64(cur.u), nanos); !ok {
			return val{}, fieldErr(f, "timestamp of %d s and %d ns is not a whole number of microseconds in the int64 range", int64(cur.u), nanos)
		}
	case rDuration:
		secs, nanos := int64(cur.u), int32(cur.n)
		if nanos < -999_999_999 || nanos > 999_999_999 || (secs > 0 && nanos < 0) || (secs < 0 && nanos > 0) {
			return val{}, fieldErr(f, "duration of %d s and %d ns is not valid (nanos within ±999999999, of the sign of seconds)", secs, nanos)
		}
		if _, ok := micros(secs, nanos); !ok {
			return val{}, fieldErr(f, "duration of %d s and %d ns is not a whole number of microseconds in the int64 range", secs, nanos)
		}
	}
	return cur, nil
}

func wireOf(r reader) protowire.Type {
	switch r {
	case rFixed32, rSfixed32, rFloat:
		return protowire.Fixed32Type
	case rFixed64, rSfixed64, rDouble:
		return protowire.Fixed64Type
	case rString, rBytes, rMessage, rTimestamp, rDuration, rWrapper, rMarker, rJSON:
		return protowire.BytesType
	}
	return protowire.VarintType
}

// micros converts seconds and nanos to microseconds, exactly or not at
// all: false when nanos is not a whole microsecond or the sum overflows.
func micros(secs int64, nanos int32) (int64, bool) {
	if nanos%1000 != 0 || secs > maxSeconds || secs < minSeconds {
		return 0, false
	}
	us, x := secs*1_000_000, int64(nanos/1000)
	if (x > 0 && us > math.MaxInt64-x) || (x < 0 && us < math.MinInt64-x) {
		return 0, false
	}
	return us + x, true
}

// renderAll renders the JSON texts that Append will write under the frame
// at base: not those of a oneof member a later one cleared, nor of a map
// entry whose key came again (protojson would not see them either).
func (d *Decoder) renderAll(m *msgPlan, base int) error {
	for i, f := range m.fields {
		if f.absent || (f.val.r != rJSON && (f.val.msg == nil || !f.val.msg.hasJSON)) {
			continue
		}
		s := d.slots[base+i]
		if f.card == cSingle {
			if s.set {
				if err := d.renderValue(&f.val, s.v); err != nil {
					return err
				}
			}
			continue
		}
		for j := s.head; j != 0; j = d.elems[j-1].next {
			if e := d.elems[j-1]; !e.drop {
				if err := d.renderValue(&f.val, e.v); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (d *Decoder) renderValue(v *vnode, x val) error {
	if v.r == rJSON {
		return d.render(&d.texts[x.u])
	}
	return d.renderAll(v.msg, int(x.u))
}

// check reports the first proto2 required field missing under the frame
// (after the whole payload, since a later occurrence of a message may
// bring it).
func (d *Decoder) check(m *msgPlan, base int) error {
	for i, f := range m.fields {
		s := d.slots[base+i]
		if f.card == cSingle && f.presence == pRequired && !s.set {
			return fieldErr(f, "required field is missing")
		}
		if f.val.msg == nil || !f.val.msg.needCheck {
			continue
		}
		if f.card == cSingle {
			if s.set {
				if err := d.check(f.val.msg, int(s.v.u)); err != nil {
					return err
				}
			}
			continue
		}
		for j := s.head; j != 0; j = d.elems[j-1].next {
			if e := d.elems[j-1]; !e.drop {
				if err := d.check(f.val.msg, int(e.v.u)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
