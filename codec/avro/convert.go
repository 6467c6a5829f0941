// Package avro maps Avro schemas from a Schema Registry to Iceberg types
// and decodes Avro binary values (the payload after the Confluent wire
// header) into Arrow builders of those types.
//
// The mapping is documented row by row in docs/formats.md ("Avro"). Schemas
// are parsed by hamba/avro; values are read by a walker compiled from the
// writer schema and the table's type, straight from the payload bytes
// (Avro spec 1.12, "Binary Encoding"), so that strings and bytes are not
// copied and steady-state decoding does not allocate.
package avro

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/apache/iceberg-go"
	hamba "github.com/hamba/avro/v2"

	"github.com/minkhq/mink/codec/wire"
)

// Logical types hamba/avro does not recognise (it keeps them as the
// "logicalType" property): the nanosecond timestamps of Avro 1.12 and uuid
// on fixed(16).
const (
	timestampNanos      = "timestamp-nanos"
	localTimestampNanos = "local-timestamp-nanos"
)

// parse parses s with a fresh cache, after its references (depth first, in
// order), so that named types resolve and two versions of one record name
// never meet in one cache.
func parse(s *wire.Schema) (hamba.Schema, error) {
	if s == nil {
		return nil, errors.New("avro: nil schema")
	}
	// The registry omits schemaType for Avro, its default.
	if s.Type != "" && s.Type != wire.TypeAvro {
		return nil, fmt.Errorf("avro: schema %d is %s, not %s", s.ID, s.Type, wire.TypeAvro)
	}
	cache := &hamba.SchemaCache{}
	if err := register(s.References, cache); err != nil {
		return nil, err
	}
	w, err := hamba.ParseWithCache(s.Text, "", cache)
	if err != nil {
		return nil, fmt.Errorf("avro: schema %d: %w", s.ID, shortErr(err))
	}
	return w, nil
}

func register(refs []wire.Reference, cache *hamba.SchemaCache) error {
	for _, r := range refs {
		if err := register(r.Schema.References, cache); err != nil {
			return err
		}
		if _, err := hamba.ParseWithCache(r.Schema.Text, "", cache); err != nil {
			return fmt.Errorf("avro: reference %s (subject %s version %d): %w", r.Name, r.Subject, r.Version, shortErr(err))
		}
	}
	return nil
}

// maxErrLen bounds the text of a hamba parse error kept in a writer
// schema's status: hamba quotes the schema part it could not parse, which
// can be the whole (megabytes of) schema, e.g. one nested deeper than its
// JSON parser allows.
const maxErrLen = 300

// shortErr is err with its text cut to maxErrLen bytes, ending in "…".
func shortErr(err error) error {
	msg := err.Error()
	if len(msg) <= maxErrLen {
		return err
	}
	cut := maxErrLen
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return errors.New(msg[:cut] + "…")
}

// Convert returns the Iceberg type of values written with s, an Avro
// schema (Avro spec 1.12; mapping in docs/formats.md).
//
// A record becomes *iceberg.StructType whose fields are the table's value
// columns; a top-level union becomes a struct of one field `value` (so the
// table's one value column keeps the union's optionality); any other
// schema becomes its type, for a table with one value column `value`.
// Field ids are placeholders 1..n in pre-order (a field, then what is
// nested in it, then its next sibling; list element; map key then value):
// the caller reassigns them by field path. Names are as the schema spells
// them; a field is required unless its type is a union with null; field
// docs are kept. A record met again inside itself (a recursive type) is a
// string column there, holding that value's Avro JSON text (Avro spec
// 1.12, "JSON Encoding"). Defaults and aliases are ConvertFields'.
//
// Errors name what cannot be mapped: a null type outside a union with
// another branch, a decimal of precision above 38, types nested deeper
// than MaxDepth, or a schema that is not Avro or does not parse.
func Convert(s *wire.Schema) (iceberg.Type, error) {
	t, _, err := convert(s, false)
	return t, err
}

// ConvertFields is Convert, and also the defaults and aliases of the
// record fields below the columns, by field path as Convert's type spells
// it ("priority", "customer.level", "items.element.sku", "u.field0.x";
// a top-level union's paths start with "value"). Fields of neither are
// left out. A default is checked against its field's type (Avro spec
// 1.12, "Schema Resolution": the value a reader takes for a field its
// writer lacks); one the column cannot hold exactly is an error naming
// the field.
func ConvertFields(s *wire.Schema) (iceberg.Type, map[string]Field, error) {
	return convert(s, true)
}

func convert(s *wire.Schema, fields bool) (iceberg.Type, map[string]Field, error) {
	w, err := parse(s)
	if err != nil {
		return nil, nil, err
	}
	c := converter{open: map[string]bool{}}
	if fields {
		c.fields = map[string]Field{}
		if c.raw, err = rawDefaultsOf(s); err != nil {
			return nil, nil, err
		}
	}
	if u, ok := w.(*hamba.UnionSchema); ok {
		id := c.id()
		t, opt, err := c.typ(u, "value")
		if err != nil {
			return nil, nil, err
		}
		return &iceberg.StructType{FieldList: []iceberg.NestedField{{ID: id, Name: "value", Type: t, Required: !opt}}}, c.fields, nil
	}
	path := "value" // the value column
	if _, ok := w.(*hamba.RecordSchema); ok {
		path = "" // its fields are the value columns
	}
	t, _, err := c.typ(w, path)
	if err != nil {
		return nil, nil, err
	}
	return t, c.fields, nil
}

// MaxDepth is the deepest nesting of types Convert accepts: a record
// field, array element, map value or branch of a complex union is one
// level below its parent; a top-level record's fields are at level 1.
// Deeper is refused (ErrUnsupported) before the nested type is read:
// each level's path is as long as the levels above it, and query engines
// choke on nested types far earlier.
const MaxDepth = 64

type converter struct {
	next  int
	open  map[string]bool // records being converted, by full name
	depth int             // types nested above the one being converted
	// fields collects the defaults and aliases of record fields by path
	// (ConvertFields); nil: not collected.
	fields map[string]Field
	raw    rawDefaults
}

// nested maps w, the type of a field, element, map value or union branch
// at path, one level below the type being mapped.
func (c *converter) nested(w hamba.Schema, path string) (iceberg.Type, bool, error) {
	if c.depth == MaxDepth {
		return nil, false, fmt.Errorf("field %s: types nested deeper than %d levels: %w", path, MaxDepth, ErrUnsupported)
	}
	c.depth++
	defer func() { c.depth-- }()
	return c.typ(w, path)
}

func (c *converter) id() int {
	c.next++
	return c.next
}

// typ maps w, and says whether it is optional (a union with null).
func (c *converter) typ(w hamba.Schema, path string) (iceberg.Type, bool, error) {
	switch w := w.(type) {
	case *hamba.RefSchema:
		return c.typ(w.Schema(), path)
	case *hamba.RecordSchema:
		if c.open[w.FullName()] {
			// A record inside itself has no finite Iceberg type: from here
			// on the value is its Avro JSON text (see jsontext.go).
			return iceberg.PrimitiveTypes.String, false, nil
		}
		c.open[w.FullName()] = true
		defer delete(c.open, w.FullName())
		st := &iceberg.StructType{FieldList: make([]iceberg.NestedField, 0, len(w.Fields()))}
		for _, f := range w.Fields() {
			id := c.id()
			p := join(path, f.Name())
			t, opt, err := c.nested(f.Type(), p)
			if err != nil {
				return nil, false, err
			}
			if err := c.field(w, f, p, t); err != nil {
				return nil, false, err
			}
			st.FieldList = append(st.FieldList, iceberg.NestedField{ID: id, Name: f.Name(), Type: t, Required: !opt, Doc: f.Doc()})
		}
		return st, false, nil
	case *hamba.ArraySchema:
		id := c.id()
		t, opt, err := c.nested(w.Items(), path+".element")
		if err != nil {
			return nil, false, err
		}
		return &iceberg.ListType{ElementID: id, Element: t, ElementRequired: !opt}, false, nil
	case *hamba.MapSchema:
		kid, vid := c.id(), c.id()
		t, _, err := c.nested(w.Values(), path+".value")
		if err != nil {
			return nil, false, err
		}
		// Values optional even when the Avro values are not a union with
		// null: iceberg-go v0.7.0 cannot scan required map values (see
		// codec.TableSchema). The decoder never stores a null there.
		return &iceberg.MapType{KeyID: kid, KeyType: iceberg.PrimitiveTypes.String, ValueID: vid, ValueType: t, ValueRequired: false}, false, nil
	case *hamba.UnionSchema:
		branches, hasNull := nonNull(w)
		switch len(branches) {
		case 0:
			return nil, false, fmt.Errorf("field %s: a union of null alone: %w", path, ErrUnsupported)
		case 1:
			t, _, err := c.typ(branches[0], path)
			return t, hasNull, err
		}
		// Iceberg Java's convention for complex unions (AvroSchemaUtil,
		// "UnionToStruct"): tag, then one optional field per non-null branch.
		st := &iceberg.StructType{FieldList: []iceberg.NestedField{{ID: c.id(), Name: unionTag, Type: iceberg.PrimitiveTypes.Int32, Required: true}}}
		for k, b := range branches {
			id := c.id()
			name := unionField(k)
			t, _, err := c.nested(b, join(path, name))
			if err != nil {
				return nil, false, err
			}
			st.FieldList = append(st.FieldList, iceberg.NestedField{ID: id, Name: name, Type: t})
		}
		return st, hasNull, nil
	case *hamba.NullSchema:
		return nil, false, fmt.Errorf("field %s: type null outside a union with another type: %w", path, ErrUnsupported)
	}
	t, err := leafType(w, path)
	return t, false, err
}

// leafType maps a primitive, enum or fixed schema, with its logical type.
func leafType(w hamba.Schema, path string) (iceberg.Type, error) {
	switch w := w.(type) {
	case *hamba.EnumSchema:
		return iceberg.PrimitiveTypes.String, nil
	case *hamba.FixedSchema:
		if d, ok := w.Logical().(*hamba.DecimalLogicalSchema); ok {
			return decimalType(d, path)
		}
		if logicalProp(w) == string(hamba.UUID) && w.Size() == 16 {
			return iceberg.PrimitiveTypes.UUID, nil
		}
		return iceberg.FixedTypeOf(w.Size()), nil
	case *hamba.PrimitiveSchema:
		var lt hamba.LogicalType
		if l := w.Logical(); l != nil {
			lt = l.Type()
		}
		switch w.Type() {
		case hamba.Boolean:
			return iceberg.PrimitiveTypes.Bool, nil
		case hamba.Int:
			switch lt {
			case hamba.Date:
				return iceberg.PrimitiveTypes.Date, nil
			case hamba.TimeMillis:
				return iceberg.PrimitiveTypes.Time, nil
			}
			return iceberg.PrimitiveTypes.Int32, nil
		case hamba.Long:
			switch lt {
			case hamba.TimeMicros:
				return iceberg.PrimitiveTypes.Time, nil
			case hamba.TimestampMillis, hamba.TimestampMicros:
				return iceberg.PrimitiveTypes.TimestampTz, nil
			case hamba.LocalTimestampMillis, hamba.LocalTimestampMicros:
				return iceberg.PrimitiveTypes.Timestamp, nil
			}
			switch logicalProp(w) {
			case timestampNanos:
				return iceberg.PrimitiveTypes.TimestampTz, nil
			case localTimestampNanos:
				return iceberg.PrimitiveTypes.Timestamp, nil
			}
			return iceberg.PrimitiveTypes.Int64, nil
		case hamba.Float:
			return iceberg.PrimitiveTypes.Float32, nil
		case hamba.Double:
			return iceberg.PrimitiveTypes.Float64, nil
		case hamba.String:
			if lt == hamba.UUID {
				return iceberg.PrimitiveTypes.UUID, nil
			}
			return iceberg.PrimitiveTypes.String, nil
		case hamba.Bytes:
			if d, ok := w.Logical().(*hamba.DecimalLogicalSchema); ok {
				return decimalType(d, path)
			}
			return iceberg.PrimitiveTypes.Binary, nil
		}
	}
	return nil, fmt.Errorf("field %s: Avro type %s: %w", path, w.Type(), ErrUnsupported)
}

func decimalType(d *hamba.DecimalLogicalSchema, path string) (iceberg.Type, error) {
	// hamba/avro checked 0 < precision, 0 ≤ scale ≤ precision, and that a
	// fixed holds the precision; Iceberg's decimal stops at 38 digits.
	if d.Precision() > 38 {
		return nil, fmt.Errorf("field %s: decimal precision %d above Iceberg's 38: %w", path, d.Precision(), ErrUnsupported)
	}
	return iceberg.DecimalTypeOf(d.Precision(), d.Scale()), nil
}

// logicalProp is a logical type hamba/avro left as a property because it
// does not recognise it.
func logicalProp(w interface{ Prop(string) any }) string {
	s, _ := w.Prop("logicalType").(string)
	return s
}

// nonNull returns the non-null branches of a union and whether it has null.
func nonNull(u *hamba.UnionSchema) ([]hamba.Schema, bool) {
	var out []hamba.Schema
	hasNull := false
	for _, b := range u.Types() {
		if b.Type() == hamba.Null {
			hasNull = true
			continue
		}
		out = append(out, b)
	}
	return out, hasNull
}

// Names of the struct fields of a complex union (Iceberg Java's
// AvroSchemaUtil convention).
const unionTag = "tag"

func unionField(k int) string { return "field" + strconv.Itoa(k) }

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// ErrUnsupported is wrapped by Convert and NewDecoder errors for schemas
// that have no Iceberg mapping.
var ErrUnsupported = errors.New("not supported")
