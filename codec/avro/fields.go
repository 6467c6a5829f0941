package avro

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
	hamba "github.com/hamba/avro/v2"

	"github.com/minkhq/mink/codec/wire"
)

// Field is what an Avro reader schema says of one record field beyond its
// Iceberg type (Avro spec 1.12, "Schema Resolution" and "Aliases"): the
// default a writer that lacks the field gives it, and the names older
// writers gave it. A table keeps these with each of its schema versions
// (package schemas), so a data file's values stay a function of its
// version.
type Field struct {
	// Type is the field's Avro type as a schema of its own (named types
	// defined where first used), which Default is written in.
	Type json.RawMessage `json:"type,omitempty"`
	// Default is the field's default as its schema writes it (Avro JSON:
	// bytes and fixed as strings of code points 0-255, a union's value of
	// its first branch). Nil: no default, or null (the same: a null).
	Default json.RawMessage `json:"default,omitempty"`
	// Aliases are the field's other names: a writer field of one of these
	// names fills this field.
	Aliases []string `json:"aliases,omitempty"`
}

// Fields are the Field of a table version's columns by Iceberg field id.
type Fields map[int]Field

// rawDefaults are the defaults of record fields as the schema text writes
// them, by record full name, then field name: hamba/avro reads numbers as
// float64, which would round a long past 2^53.
type rawDefaults map[string]map[string]json.RawMessage

func rawDefaultsOf(s *wire.Schema) (rawDefaults, error) {
	raw := rawDefaults{}
	var walk func(refs []wire.Reference) error
	walk = func(refs []wire.Reference) error {
		for _, r := range refs {
			if err := walk(r.Schema.References); err != nil {
				return err
			}
			if err := raw.add(r.Schema.Text); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(s.References); err != nil {
		return nil, err
	}
	return raw, raw.add(s.Text)
}

func (raw rawDefaults) add(text string) error {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("avro: schema JSON: %w", err)
	}
	raw.walk(v, "")
	return nil
}

// walk records the defaults of the records defined in v, a schema JSON
// value in namespace ns (Avro spec 1.12, "Names").
func (raw rawDefaults) walk(v any, ns string) {
	switch v := v.(type) {
	case []any:
		for _, b := range v {
			raw.walk(b, ns)
		}
	case map[string]any:
		switch t := v["type"].(type) {
		case string:
			switch t {
			case "record", "error":
				full := fullName(v, ns)
				if i := strings.LastIndexByte(full, '.'); i >= 0 {
					ns = full[:i]
				} else {
					ns = ""
				}
				fields, _ := v["fields"].([]any)
				for _, f := range fields {
					f, ok := f.(map[string]any)
					if !ok {
						continue
					}
					name, _ := f["name"].(string)
					if d, ok := f["default"]; ok {
						if b, err := json.Marshal(d); err == nil {
							if raw[full] == nil {
								raw[full] = map[string]json.RawMessage{}
							}
							raw[full][name] = b
						}
					}
					raw.walk(f["type"], ns)
				}
			case "array":
				raw.walk(v["items"], ns)
			case "map":
				raw.walk(v["values"], ns)
			}
		default:
			raw.walk(t, ns)
		}
	}
}

func fullName(v map[string]any, ns string) string {
	name, _ := v["name"].(string)
	if strings.Contains(name, ".") {
		return name
	}
	if n, ok := v["namespace"].(string); ok {
		ns = n
	}
	if ns == "" {
		return name
	}
	return ns + "." + name
}

// field collects the default and aliases of field f of record r, at path,
// after checking that the default converts exactly to the field's type.
func (c *converter) field(r *hamba.RecordSchema, f *hamba.Field, path string, t iceberg.Type) error {
	if c.fields == nil {
		return nil
	}
	var out Field
	if d := c.raw[r.FullName()][f.Name()]; d != nil && string(d) != "null" {
		typ, err := standalone(f.Type(), c.raw)
		if err != nil {
			return fmt.Errorf("field %s: %w", path, err)
		}
		out.Type, out.Default = typ, d
		if _, err := out.constant(t, path); err != nil {
			return err
		}
	}
	if len(f.Aliases()) > 0 {
		out.Aliases = slices.Clone(f.Aliases())
	}
	if out.Default != nil || out.Aliases != nil {
		c.fields[path] = out
	}
	return nil
}

// standalone writes w as a schema of its own: each named type in full
// where first met, record fields with their defaults.
func standalone(w hamba.Schema, raw rawDefaults) (json.RawMessage, error) {
	v, err := standaloneValue(w, map[string]bool{}, raw)
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

func standaloneValue(w hamba.Schema, defined map[string]bool, raw rawDefaults) (any, error) {
	switch w := w.(type) {
	case *hamba.RefSchema:
		if defined[w.Schema().FullName()] {
			return w.Schema().FullName(), nil
		}
		return standaloneValue(w.Schema(), defined, raw)
	case *hamba.RecordSchema:
		defined[w.FullName()] = true
		fields := make([]any, 0, len(w.Fields()))
		for _, f := range w.Fields() {
			t, err := standaloneValue(f.Type(), defined, raw)
			if err != nil {
				return nil, err
			}
			m := map[string]any{"name": f.Name(), "type": t}
			if d := raw[w.FullName()][f.Name()]; d != nil {
				m["default"] = d
			}
			fields = append(fields, m)
		}
		return map[string]any{"type": "record", "name": w.FullName(), "fields": fields}, nil
	case *hamba.ArraySchema:
		t, err := standaloneValue(w.Items(), defined, raw)
		return map[string]any{"type": "array", "items": t}, err
	case *hamba.MapSchema:
		t, err := standaloneValue(w.Values(), defined, raw)
		return map[string]any{"type": "map", "values": t}, err
	case *hamba.UnionSchema:
		out := make([]any, 0, len(w.Types()))
		for _, b := range w.Types() {
			t, err := standaloneValue(b, defined, raw)
			if err != nil {
				return nil, err
			}
			out = append(out, t)
		}
		return out, nil
	case hamba.NamedSchema:
		defined[w.FullName()] = true
	}
	b, err := json.Marshal(w)
	return json.RawMessage(b), err
}

// constant compiles f's default against column type t at path, into a
// Decoder holding the value decoded once, to append for every record
// whose writer lacks the field. The default is written in Avro binary
// from its JSON (Avro spec 1.12, "Schema Resolution"), then decoded as
// any value is: a default the column cannot hold exactly (a decimal wider
// than its precision, a string that is not a UUID) is an error naming the
// field.
func (f Field) constant(t iceberg.Type, path string) (*Decoder, error) {
	w, err := hamba.ParseWithCache(string(f.Type), "", &hamba.SchemaCache{})
	if err != nil {
		return nil, fmt.Errorf("field %s: default's type: %w", path, shortErr(err))
	}
	dec := json.NewDecoder(bytes.NewReader(f.Default))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("field %s: default: %w", path, err)
	}
	raw := rawDefaults{}
	if err := raw.add(string(f.Type)); err != nil {
		return nil, fmt.Errorf("field %s: default's type: %w", path, err)
	}
	bin, err := raw.encode(nil, w, v)
	if err != nil {
		return nil, fmt.Errorf("field %s: default %s: %w", path, f.Default, err)
	}
	n, err := (&compiler{open: map[string]bool{}}).compile(w, t, path)
	if err != nil {
		return nil, fmt.Errorf("field %s: default: %w", path, err)
	}
	d := &Decoder{root: n, in: bin}
	if err := d.read(n); err != nil {
		return nil, fmt.Errorf("default of %w", err)
	}
	if d.pos != len(bin) {
		return nil, fmt.Errorf("field %s: default %s: %d bytes after the value", path, f.Default, len(bin)-d.pos)
	}
	return d, nil
}

// encode appends the Avro binary encoding of v, a JSON value
// decoded with UseNumber, as a default of type w (Avro spec 1.12,
// "Schema Resolution": a union's default is of its first branch; bytes
// and fixed are strings of code points 0-255; a record's missing field
// takes that field's own default).
func (raw rawDefaults) encode(b []byte, w hamba.Schema, v any) ([]byte, error) {
	if r, ok := w.(*hamba.RefSchema); ok {
		w = r.Schema()
	}
	bad := func() ([]byte, error) {
		return nil, fmt.Errorf("%s is not a default of type %s", jsonText(v), w.Type())
	}
	switch w := w.(type) {
	case *hamba.UnionSchema:
		return raw.encode(appendLong(b, 0), w.Types()[0], v)
	case *hamba.NullSchema:
		if v != nil {
			return bad()
		}
		return b, nil
	case *hamba.RecordSchema:
		m, ok := v.(map[string]any)
		if !ok {
			return bad()
		}
		for _, f := range w.Fields() {
			fv, ok := m[f.Name()]
			if !ok {
				d := raw[w.FullName()][f.Name()]
				if d == nil {
					return nil, fmt.Errorf("field %s of the default: no value and no default", f.Name())
				}
				dec := json.NewDecoder(bytes.NewReader(d))
				dec.UseNumber()
				if err := dec.Decode(&fv); err != nil {
					return nil, err
				}
			}
			var err error
			if b, err = raw.encode(b, f.Type(), fv); err != nil {
				return nil, fmt.Errorf("field %s: %w", f.Name(), err)
			}
		}
		return b, nil
	case *hamba.ArraySchema:
		a, ok := v.([]any)
		if !ok {
			return bad()
		}
		if len(a) > 0 {
			b = appendLong(b, int64(len(a)))
			for _, x := range a {
				var err error
				if b, err = raw.encode(b, w.Items(), x); err != nil {
					return nil, err
				}
			}
		}
		return appendLong(b, 0), nil
	case *hamba.MapSchema:
		m, ok := v.(map[string]any)
		if !ok {
			return bad()
		}
		if len(m) > 0 {
			b = appendLong(b, int64(len(m)))
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				b = appendLong(b, int64(len(k)))
				b = append(b, k...)
				var err error
				if b, err = raw.encode(b, w.Values(), m[k]); err != nil {
					return nil, err
				}
			}
		}
		return appendLong(b, 0), nil
	case *hamba.EnumSchema:
		s, ok := v.(string)
		if !ok {
			return bad()
		}
		i := slices.Index(w.Symbols(), s)
		if i < 0 {
			return nil, fmt.Errorf("%q is not a symbol of enum %s", s, w.FullName())
		}
		return appendLong(b, int64(i)), nil
	case *hamba.FixedSchema:
		s, ok := v.(string)
		if !ok {
			return bad()
		}
		raw, err := codePoints(s)
		if err != nil {
			return nil, err
		}
		if len(raw) != w.Size() {
			return nil, fmt.Errorf("default of %d bytes for fixed(%d)", len(raw), w.Size())
		}
		return append(b, raw...), nil
	case *hamba.PrimitiveSchema:
		switch w.Type() {
		case hamba.Boolean:
			x, ok := v.(bool)
			if !ok {
				return bad()
			}
			if x {
				return append(b, 1), nil
			}
			return append(b, 0), nil
		case hamba.Int, hamba.Long:
			n, ok := v.(json.Number)
			if !ok {
				return bad()
			}
			bits := 64
			if w.Type() == hamba.Int {
				bits = 32
			}
			x, err := strconv.ParseInt(string(n), 10, bits)
			if err != nil {
				return nil, fmt.Errorf("%s is not an integer of type %s", n, w.Type())
			}
			return appendLong(b, x), nil
		case hamba.Float, hamba.Double:
			n, ok := v.(json.Number)
			if !ok {
				return bad()
			}
			if w.Type() == hamba.Float {
				x, err := strconv.ParseFloat(string(n), 32)
				if err != nil {
					return nil, fmt.Errorf("%s is not a float", n)
				}
				return appendUint32(b, math.Float32bits(float32(x))), nil
			}
			x, err := strconv.ParseFloat(string(n), 64)
			if err != nil {
				return nil, fmt.Errorf("%s is not a double", n)
			}
			return appendUint64(b, math.Float64bits(x)), nil
		case hamba.String:
			s, ok := v.(string)
			if !ok {
				return bad()
			}
			b = appendLong(b, int64(len(s)))
			return append(b, s...), nil
		case hamba.Bytes:
			s, ok := v.(string)
			if !ok {
				return bad()
			}
			raw, err := codePoints(s)
			if err != nil {
				return nil, err
			}
			b = appendLong(b, int64(len(raw)))
			return append(b, raw...), nil
		}
	}
	return nil, fmt.Errorf("a default of type %s: %w", w.Type(), ErrUnsupported)
}

// codePoints maps a default's string of code points 0-255 to bytes.
func codePoints(s string) ([]byte, error) {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 0xff {
			return nil, fmt.Errorf("%q holds U+%04X: bytes defaults are code points 0-255", s, r)
		}
		out = append(out, byte(r))
	}
	return out, nil
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 64 {
		return string(b[:64]) + "…"
	}
	return string(b)
}

func appendLong(b []byte, v int64) []byte {
	u := uint64(v<<1) ^ uint64(v>>63)
	for u >= 0x80 {
		b = append(b, byte(u)|0x80)
		u >>= 7
	}
	return append(b, byte(u))
}

func appendUint32(b []byte, v uint32) []byte {
	return append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
}

func appendUint64(b []byte, v uint64) []byte {
	return appendUint32(appendUint32(b, uint32(v)), uint32(v>>32))
}
