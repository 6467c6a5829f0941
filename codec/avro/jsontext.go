package avro

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	hamba "github.com/hamba/avro/v2"
)

// MaxJSONDepth is the deepest nesting of a recursive value's JSON text: a
// record, array, map or union branch is one level. A deeper value is a
// dead letter naming the limit, never cut short.
const MaxJSONDepth = 10_000

// jsonText reads one value of writer type w from the payload and appends
// it to out in the Avro JSON encoding (Avro spec 1.12, "JSON Encoding"):
// null, true/false, int and long as integers, float and double as the
// shortest decimal that reads back to the same bits ("NaN", "Infinity",
// "-Infinity" as strings, as Avro's Java encoder writes them), bytes and
// fixed as strings of code points 0-255, a record as an object of its
// fields in writer order, an enum as its symbol, arrays and maps, and a
// union as null or {"<branch>": value}, the branch named by its full name
// (a named type) or its type ("int", "array"). A logical type is its
// underlying type's text, so the text holds every value exactly. n names
// the column in errors; the checks are Decode's.
func (d *Decoder) jsonText(out []byte, w hamba.Schema, n *node, depth int) ([]byte, error) {
	if depth > MaxJSONDepth {
		return nil, fmt.Errorf("field %s: recursive value nested deeper than %d levels", n.path, MaxJSONDepth)
	}
	if len(out) > math.MaxInt32 {
		return nil, fmt.Errorf("field %s: JSON text of a recursive value longer than 2 GiB", n.path)
	}
	if r, ok := w.(*hamba.RefSchema); ok {
		w = r.Schema()
	}
	switch w := w.(type) {
	case *hamba.NullSchema:
		return append(out, "null"...), nil
	case *hamba.RecordSchema:
		out = append(out, '{')
		for i, f := range w.Fields() {
			if i > 0 {
				out = append(out, ',')
			}
			out = appendJSONString(out, f.Name())
			out = append(out, ':')
			var err error
			if out, err = d.jsonText(out, f.Type(), n, depth+1); err != nil {
				return nil, err
			}
		}
		return append(out, '}'), nil
	case *hamba.UnionSchema:
		v, err := d.readLong(n)
		if err != nil {
			return nil, err
		}
		if v < 0 || v >= int64(len(w.Types())) {
			return nil, fmt.Errorf("field %s: union index %d out of range [0, %d)", n.path, v, len(w.Types()))
		}
		b := w.Types()[v]
		if b.Type() == hamba.Null {
			return append(out, "null"...), nil
		}
		out = appendJSONString(append(out, '{'), branchName(b))
		out = append(out, ':')
		if out, err = d.jsonText(out, b, n, depth+1); err != nil {
			return nil, err
		}
		return append(out, '}'), nil
	case *hamba.ArraySchema:
		return d.jsonBlocks(out, w.Items(), false, n, depth)
	case *hamba.MapSchema:
		return d.jsonBlocks(out, w.Values(), true, n, depth)
	case *hamba.EnumSchema:
		v, err := d.readInt(n)
		if err != nil {
			return nil, err
		}
		if v < 0 || v >= int64(len(w.Symbols())) {
			return nil, fmt.Errorf("field %s: enum index %d out of range [0, %d)", n.path, v, len(w.Symbols()))
		}
		return appendJSONString(out, w.Symbols()[v]), nil
	case *hamba.FixedSchema:
		off, err := d.fixed(n, w.Size())
		if err != nil {
			return nil, err
		}
		return appendCodePoints(out, d.in[off:off+w.Size()]), nil
	case *hamba.PrimitiveSchema:
		switch w.Type() {
		case hamba.Boolean:
			if d.pos >= len(d.in) {
				return nil, d.truncated(n)
			}
			b := d.in[d.pos]
			if b > 1 {
				return nil, fmt.Errorf("field %s: boolean byte 0x%02x, not 0 or 1", n.path, b)
			}
			d.pos++
			return strconv.AppendBool(out, b == 1), nil
		case hamba.Int:
			v, err := d.readInt(n)
			return strconv.AppendInt(out, v, 10), err
		case hamba.Long:
			v, err := d.readLong(n)
			return strconv.AppendInt(out, v, 10), err
		case hamba.Float:
			if len(d.in)-d.pos < 4 {
				return nil, d.truncated(n)
			}
			f := math.Float32frombits(binary.LittleEndian.Uint32(d.in[d.pos:]))
			d.pos += 4
			return appendJSONFloat(out, float64(f), 32), nil
		case hamba.Double:
			if len(d.in)-d.pos < 8 {
				return nil, d.truncated(n)
			}
			f := math.Float64frombits(binary.LittleEndian.Uint64(d.in[d.pos:]))
			d.pos += 8
			return appendJSONFloat(out, f, 64), nil
		case hamba.String:
			off, l, err := d.bytes(n)
			if err != nil {
				return nil, err
			}
			if !utf8.Valid(d.in[off : off+l]) {
				return nil, fmt.Errorf("field %s: string is not valid UTF-8", n.path)
			}
			return appendJSONString(out, string(d.in[off:off+l])), nil
		case hamba.Bytes:
			off, l, err := d.bytes(n)
			if err != nil {
				return nil, err
			}
			return appendCodePoints(out, d.in[off:off+l]), nil
		}
	}
	return nil, fmt.Errorf("field %s: Avro type %s: %w", n.path, w.Type(), ErrUnsupported)
}

// jsonBlocks reads an array or map (blocks, as Decoder.blocks) as JSON.
func (d *Decoder) jsonBlocks(out []byte, item hamba.Schema, isMap bool, n *node, depth int) ([]byte, error) {
	if isMap {
		out = append(out, '{')
	} else {
		out = append(out, '[')
	}
	minItem := minSize(item, map[string]bool{})
	if isMap {
		minItem++
	}
	first := true
	for {
		c, err := d.readLong(n)
		if err != nil {
			return nil, err
		}
		if c == 0 {
			break
		}
		size, start := int64(-1), 0
		if c < 0 {
			if c == math.MinInt64 {
				return nil, fmt.Errorf("field %s: block count %d out of range", n.path, c)
			}
			c = -c
			if size, err = d.readLong(n); err != nil {
				return nil, err
			}
			if size < 0 || size > int64(len(d.in)-d.pos) {
				return nil, fmt.Errorf("field %s: block size %d bytes does not fit the %d bytes left", n.path, size, len(d.in)-d.pos)
			}
			start = d.pos
		}
		if minItem > 0 {
			if c > int64((len(d.in)-d.pos)/minItem) {
				return nil, fmt.Errorf("field %s: block of %d items longer than the %d bytes left", n.path, c, len(d.in)-d.pos)
			}
		} else if d.zeroItems += int(min(c, maxZeroItems+1)); d.zeroItems > maxZeroItems {
			return nil, fmt.Errorf("field %s: more than %d items of no size", n.path, maxZeroItems)
		}
		for range c {
			if !first {
				out = append(out, ',')
			}
			first = false
			if isMap {
				off, l, err := d.bytes(n)
				if err != nil {
					return nil, err
				}
				if !utf8.Valid(d.in[off : off+l]) {
					return nil, fmt.Errorf("field %s: map key is not valid UTF-8", n.path)
				}
				out = appendJSONString(out, string(d.in[off:off+l]))
				out = append(out, ':')
			}
			if out, err = d.jsonText(out, item, n, depth+1); err != nil {
				return nil, err
			}
		}
		if size >= 0 && int64(d.pos-start) != size {
			return nil, fmt.Errorf("field %s: block size %d bytes, its items take %d", n.path, size, d.pos-start)
		}
	}
	if isMap {
		return append(out, '}'), nil
	}
	return append(out, ']'), nil
}

// branchName names a union branch in the JSON encoding.
func branchName(w hamba.Schema) string {
	if r, ok := w.(*hamba.RefSchema); ok {
		w = r.Schema()
	}
	if n, ok := w.(hamba.NamedSchema); ok {
		return n.FullName()
	}
	return string(w.Type())
}

// minSize is the fewest bytes a value of w takes in the binary encoding;
// a record met again inside itself counts 0.
func minSize(w hamba.Schema, open map[string]bool) int {
	if r, ok := w.(*hamba.RefSchema); ok {
		w = r.Schema()
	}
	switch w := w.(type) {
	case *hamba.NullSchema:
		return 0
	case *hamba.RecordSchema:
		if open[w.FullName()] {
			return 0
		}
		open[w.FullName()] = true
		defer delete(open, w.FullName())
		s := 0
		for _, f := range w.Fields() {
			s += minSize(f.Type(), open)
		}
		return s
	case *hamba.FixedSchema:
		return w.Size()
	case *hamba.PrimitiveSchema:
		switch w.Type() {
		case hamba.Float:
			return 4
		case hamba.Double:
			return 8
		}
	}
	return 1
}

func appendJSONFloat(out []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(out, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(out, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(out, `"-Infinity"`...)
	}
	return strconv.AppendFloat(out, f, 'g', -1, bits)
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s, valid UTF-8, as a JSON string (RFC 8259):
// quotes, backslashes and control characters escaped, nothing else.
func appendJSONString(out []byte, s string) []byte {
	out = append(out, '"')
	for i := 0; i < len(s); i++ {
		out = appendJSONByte(out, s[i])
	}
	return append(out, '"')
}

// appendCodePoints appends b as a JSON string of code points 0-255, one
// per byte (the Avro JSON encoding of bytes and fixed).
func appendCodePoints(out, b []byte) []byte {
	out = append(out, '"')
	for _, c := range b {
		if c < 0x80 {
			out = appendJSONByte(out, c)
		} else {
			out = utf8.AppendRune(out, rune(c))
		}
	}
	return append(out, '"')
}

func appendJSONByte(out []byte, c byte) []byte {
	switch {
	case c == '"' || c == '\\':
		return append(out, '\\', c)
	case c < 0x20:
		return append(out, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
	}
	return append(out, c)
}
