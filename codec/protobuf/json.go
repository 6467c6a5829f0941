package protobuf

import (
	"encoding/base64"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// Values held as JSON text (google.protobuf.Struct, Value, ListValue and
// recursive messages) are parsed by protobuf-go into a dynamic message
// and written here, not by protojson: protojson's output is not stable
// between releases (it varies spaces on purpose), and a data file's bytes
// must be the same on every rebuild.
//
// The text follows the Protobuf JSON mapping (protobuf.dev,
// "ProtoJSON Format") with proto field names (its "use proto field name"
// option, as the columns are named), no spaces, fields in field-number
// order, map keys sorted, and fields without presence left out where they
// hold their zero value (the mapping's default). Two choices keep it exact
// where the mapping would need what the schema does not give: an Any is
// its two fields ({"type_url": …, "value": base64}), as its column is, and
// a FieldMask is {"paths": [...]}.

// jsonRecursionLimit bounds the nesting of a JSON value's message, as
// protobuf-go's default RecursionLimit does; deeper is a Decode error.
const jsonRecursionLimit = 10000

// render parses t's message bytes and appends its JSON to d.text.
func (d *Decoder) render(t *jsonText) error {
	m := dynamicpb.NewMessage(t.md)
	// Each occurrence parsed on its own, merged into the last: the
	// concatenation could turn two invalid pieces into a valid message.
	err := unmarshal(d.payload[t.i:t.j], m)
	for k := 0; err == nil && k < len(t.more); k += 2 {
		err = unmarshal(d.payload[t.more[k]:t.more[k+1]], m)
	}
	if err != nil {
		// protobuf-go's error texts vary on purpose; a reason must not.
		return fieldErr(t.f, "not a valid %s message (invalid wire data, invalid UTF-8, or nested deeper than %d)", t.md.FullName(), jsonRecursionLimit)
	}
	w := jsonWriter{b: d.text}
	t.start = len(d.text)
	if err := w.message(m, 0); err != nil {
		return fieldErr(t.f, "%v", err)
	}
	d.text = w.b
	t.end = len(d.text)
	d.unknown += w.unknown
	return nil
}

// unmarshal parses b into m, merging with what m holds. protobuf-go v1.36.12 panics on some invalid
// input ("type mismatch: cannot convert nil to map key": a map entry whose
// key comes again with another wire type, found by FuzzShapes); such a
// payload is invalid, and a record must never stop the node.
func unmarshal(b []byte, m *dynamicpb.Message) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("protobuf-go: %v", r)
		}
	}()
	// AllowPartial: required fields are checked by jsonWriter, with a
	// stable text.
	return proto.UnmarshalOptions{Merge: true, AllowPartial: true, RecursionLimit: jsonRecursionLimit}.Unmarshal(b, m)
}

type jsonWriter struct {
	b       []byte
	unknown int
}

func (w *jsonWriter) message(m protoreflect.Message, depth int) error {
	md := m.Descriptor()
	if err := w.checkUnknown(m); err != nil {
		return err
	}
	switch md.FullName() {
	case "google.protobuf.Struct":
		return w.mapValue(m.Get(md.Fields().ByNumber(1)).Map(), md.Fields().ByNumber(1), depth)
	case "google.protobuf.ListValue":
		return w.list(m.Get(md.Fields().ByNumber(1)).List(), md.Fields().ByNumber(1), depth)
	case "google.protobuf.Value":
		od := md.Oneofs().ByName("kind")
		fd := m.WhichOneof(od)
		if fd == nil {
			return fmt.Errorf("google.protobuf.Value has none of its kinds set, and no JSON form")
		}
		if fd.Name() == "number_value" {
			f := m.Get(fd).Float()
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return fmt.Errorf("google.protobuf.Value: number %v has no JSON form", f)
			}
		}
		return w.single(m.Get(fd), fd, depth)
	case "google.protobuf.Timestamp":
		return w.timestamp(m)
	case "google.protobuf.Duration":
		return w.duration(m)
	case "google.protobuf.DoubleValue", "google.protobuf.FloatValue",
		"google.protobuf.Int64Value", "google.protobuf.UInt64Value",
		"google.protobuf.Int32Value", "google.protobuf.UInt32Value",
		"google.protobuf.BoolValue", "google.protobuf.StringValue",
		"google.protobuf.BytesValue":
		fd := md.Fields().ByNumber(1)
		return w.single(m.Get(fd), fd, depth)
	}
	w.b = append(w.b, '{')
	fds := md.Fields()
	order := make([]protoreflect.FieldDescriptor, 0, fds.Len())
	for i := range fds.Len() {
		order = append(order, fds.Get(i))
	}
	slices.SortFunc(order, func(a, b protoreflect.FieldDescriptor) int { return int(a.Number()) - int(b.Number()) })
	first := true
	for _, fd := range order {
		if !m.Has(fd) {
			if fd.Cardinality() == protoreflect.Required {
				return fmt.Errorf("%s: required field %s is missing", md.FullName(), fd.Name())
			}
			continue
		}
		if !first {
			w.b = append(w.b, ',')
		}
		first = false
		w.b = appendString(w.b, string(fd.Name()))
		w.b = append(w.b, ':')
		var err error
		switch {
		case fd.IsMap():
			err = w.mapValue(m.Get(fd).Map(), fd, depth)
		case fd.IsList():
			err = w.list(m.Get(fd).List(), fd, depth)
		default:
			err = w.single(m.Get(fd), fd, depth)
		}
		if err != nil {
			return err
		}
	}
	w.b = append(w.b, '}')
	return nil
}

// checkUnknown counts m's unknown fields; a field whose number m defines
// came with another wire type (protobuf-go keeps it as unknown): an error,
// as in the columns' decoder.
func (w *jsonWriter) checkUnknown(m protoreflect.Message) error {
	raw := m.GetUnknown()
	for len(raw) > 0 {
		num, typ, n := protowire.ConsumeTag(raw)
		if n < 0 {
			return fmt.Errorf("%s: invalid unknown field", m.Descriptor().FullName())
		}
		if fd := m.Descriptor().Fields().ByNumber(num); fd != nil {
			return fmt.Errorf("%s: field %s has wire type %s", m.Descriptor().FullName(), fd.Name(), wireName(typ))
		}
		n2 := protowire.ConsumeFieldValue(num, typ, raw[n:])
		if n2 < 0 {
			return fmt.Errorf("%s: invalid unknown field %d", m.Descriptor().FullName(), num)
		}
		raw = raw[n+n2:]
		w.unknown++
	}
	return nil
}

func (w *jsonWriter) list(l protoreflect.List, fd protoreflect.FieldDescriptor, depth int) error {
	w.b = append(w.b, '[')
	for i := range l.Len() {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		if err := w.single(l.Get(i), fd, depth); err != nil {
			return err
		}
	}
	w.b = append(w.b, ']')
	return nil
}

// mapValue writes a map as an object with its keys sorted (as their JSON
// text: the bytes of a string key, the decimal of a number).
func (w *jsonWriter) mapValue(mp protoreflect.Map, fd protoreflect.FieldDescriptor, depth int) error {
	type entry struct {
		key string
		v   protoreflect.Value
	}
	entries := make([]entry, 0, mp.Len())
	var bad error
	mp.Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
		ks := k.String()
		if fd.MapKey().Kind() == protoreflect.StringKind && !utf8.ValidString(ks) {
			bad = fmt.Errorf("%s: map key is not valid UTF-8", fd.Name())
			return false
		}
		entries = append(entries, entry{ks, v})
		return true
	})
	if bad != nil {
		return bad
	}
	slices.SortFunc(entries, func(a, b entry) int {
		switch {
		case a.key < b.key:
			return -1
		case a.key > b.key:
			return 1
		}
		return 0
	})
	w.b = append(w.b, '{')
	for i, e := range entries {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.b = appendString(w.b, e.key)
		w.b = append(w.b, ':')
		if err := w.single(e.v, fd.MapValue(), depth); err != nil {
			return err
		}
	}
	w.b = append(w.b, '}')
	return nil
}

// single writes one value of fd (a singular field, a list element or a
// map value).
func (w *jsonWriter) single(v protoreflect.Value, fd protoreflect.FieldDescriptor, depth int) error {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		if depth >= jsonRecursionLimit {
			return fmt.Errorf("messages nested deeper than %d", jsonRecursionLimit)
		}
		return w.message(v.Message(), depth+1)
	case protoreflect.BoolKind:
		w.b = strconv.AppendBool(w.b, v.Bool())
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		w.b = strconv.AppendInt(w.b, v.Int(), 10)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		w.b = strconv.AppendUint(w.b, v.Uint(), 10)
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		// The mapping writes 64-bit integers as strings: JSON numbers are
		// doubles to most readers.
		w.b = append(w.b, '"')
		w.b = strconv.AppendInt(w.b, v.Int(), 10)
		w.b = append(w.b, '"')
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		w.b = append(w.b, '"')
		w.b = strconv.AppendUint(w.b, v.Uint(), 10)
		w.b = append(w.b, '"')
	case protoreflect.FloatKind:
		w.b = appendFloat(w.b, v.Float(), 32)
	case protoreflect.DoubleKind:
		w.b = appendFloat(w.b, v.Float(), 64)
	case protoreflect.StringKind:
		s := v.String()
		if !utf8.ValidString(s) {
			return fmt.Errorf("field %s: string is not valid UTF-8", fd.Name())
		}
		w.b = appendString(w.b, s)
	case protoreflect.BytesKind:
		w.b = append(w.b, '"')
		w.b = base64.StdEncoding.AppendEncode(w.b, v.Bytes())
		w.b = append(w.b, '"')
	case protoreflect.EnumKind:
		if fd.Enum().FullName() == "google.protobuf.NullValue" {
			w.b = append(w.b, "null"...)
			break
		}
		if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
			w.b = appendString(w.b, string(ev.Name()))
		} else {
			w.b = strconv.AppendInt(w.b, int64(v.Enum()), 10)
		}
	}
	return nil
}

// Bounds of the mapping's Timestamp (0001-01-01T00:00:00Z to
// 9999-12-31T23:59:59.999999999Z) and Duration (±10,000 years) in seconds.
const (
	minTimestamp = -62135596800
	maxTimestamp = 253402300799
	maxDuration  = 315576000000
)

func (w *jsonWriter) timestamp(m protoreflect.Message) error {
	fds := m.Descriptor().Fields()
	secs, nanos := m.Get(fds.ByNumber(1)).Int(), m.Get(fds.ByNumber(2)).Int()
	if secs < minTimestamp || secs > maxTimestamp || nanos < 0 || nanos > 999_999_999 {
		return fmt.Errorf("google.protobuf.Timestamp of %d s and %d ns is outside years 1 to 9999", secs, nanos)
	}
	t := time.Unix(secs, 0).UTC()
	w.b = append(w.b, '"')
	w.b = t.AppendFormat(w.b, "2006-01-02T15:04:05")
	w.b = appendNanos(w.b, nanos)
	w.b = append(w.b, 'Z', '"')
	return nil
}

func (w *jsonWriter) duration(m protoreflect.Message) error {
	fds := m.Descriptor().Fields()
	secs, nanos := m.Get(fds.ByNumber(1)).Int(), m.Get(fds.ByNumber(2)).Int()
	if secs < -maxDuration || secs > maxDuration || nanos < -999_999_999 || nanos > 999_999_999 ||
		(secs > 0 && nanos < 0) || (secs < 0 && nanos > 0) {
		return fmt.Errorf("google.protobuf.Duration of %d s and %d ns is not valid", secs, nanos)
	}
	w.b = append(w.b, '"')
	if secs < 0 || nanos < 0 {
		w.b = append(w.b, '-')
		secs, nanos = -secs, -nanos
	}
	w.b = strconv.AppendInt(w.b, secs, 10)
	w.b = appendNanos(w.b, nanos)
	w.b = append(w.b, 's', '"')
	return nil
}

// appendNanos appends a fraction of 0, 3, 6 or 9 digits, as the mapping
// writes them.
func appendNanos(b []byte, nanos int64) []byte {
	switch {
	case nanos == 0:
		return b
	case nanos%1_000_000 == 0:
		return fmt.Appendf(b, ".%03d", nanos/1_000_000)
	case nanos%1000 == 0:
		return fmt.Appendf(b, ".%06d", nanos/1000)
	}
	return fmt.Appendf(b, ".%09d", nanos)
}

// appendFloat writes f as the mapping does: the shortest decimal that
// reads back as f (ECMAScript's Number.prototype.toString form, as
// encoding/json), and "NaN", "Infinity", "-Infinity" as strings.
func appendFloat(b []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(b, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(b, `"-Infinity"`...)
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21)) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, bits)
	if format == 'e' {
		// 1e-07 → 1e-7
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// appendString writes s (valid UTF-8) as a JSON string: `"` and `\`
// escaped, control characters as \n, \t… or \u00XX, the rest as is.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c == '\t':
			b = append(b, '\\', 't')
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}
