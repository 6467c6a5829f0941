package schemas

import (
	"errors"
	"fmt"
	"strings"

	"github.com/apache/iceberg-go"

	"github.com/minkhq/mink/codec"
)

// Reasons an [IncompatibleError] gives after the two types.
const (
	// ReasonPromotion: the change is not one of the Iceberg spec's type
	// promotions (spec "Schema Evolution", valid type promotions).
	ReasonPromotion = "Iceberg allows only int→long, float→double, wider decimal precision and required→optional"
	// ReasonMapKey: a map key's type changed at all. Iceberg's UpdateSchema
	// (Java, iceberg-go) treats map keys as immutable.
	ReasonMapKey = "Iceberg does not change map keys"
	// ReasonEvolve: only [Compatible] gives it; [Evolve] takes the change.
	ReasonEvolve = "the table schema must evolve first"
)

// ErrInvalidField is wrapped by the errors of Evolve for an incoming field
// no schema can take, whatever the table's: no name, no type, a name twice
// in one struct, the reserved _kafka, types nested too deep. The incoming
// schema is at fault, never the table.
var ErrInvalidField = errors.New("invalid incoming field")

// invalidField is an error that also wraps ErrInvalidField, its text
// unchanged.
type invalidField struct{ error }

func (e invalidField) Unwrap() []error { return []error{e.error, ErrInvalidField} }

func invalid(err error) error { return invalidField{err} }

// IncompatibleError is a field whose incoming type the table's current
// schema cannot take as it is.
//
// From [Evolve] it is a change Iceberg does not allow (Evolvable false):
// records of that schema cannot be stored in the table, and go to its
// dead-letter table with this error as the reason. From [Compatible] it may
// also be a change Evolve takes (Evolvable true): the table needs a new
// schema version before such records are stored.
type IncompatibleError struct {
	// Path is the dotted field path below the top level: "customer.id";
	// a list element is "tags.element", a map key and value "attrs.key"
	// and "attrs.value".
	Path string
	// From is the table's side: an Iceberg type without field ids
	// ("string", "struct<name: optional string>"), prefixed "required " or
	// "optional " when required-ness is what differs; "" when the table has
	// no such field.
	From string
	// To is the incoming side, in the same form; "" when the incoming
	// schema has no such field.
	To string
	// Reason is one of ReasonPromotion, ReasonMapKey, ReasonEvolve.
	Reason string
	// Evolvable reports whether Evolve takes the change.
	Evolvable bool
}

// Error reads like `field customer.id: table has string, schema has int;
// Iceberg allows only int→long, float→double, wider decimal precision and
// required→optional`.
func (e *IncompatibleError) Error() string {
	return fmt.Sprintf("field %s: table has %s, schema has %s; %s", e.Path, side(e.From), side(e.To), e.Reason)
}

func side(s string) string {
	if s == "" {
		return "no such field"
	}
	return s
}

// Columns returns the top-level fields of s after _kafka: the value columns
// (and a decoded key's column). A schema without _kafka first is returned
// whole.
func Columns(s *iceberg.Schema) []iceberg.NestedField {
	fields := s.Fields()
	if len(fields) > 0 && fields[0].Name == codec.KafkaColumn {
		return fields[1:]
	}
	return fields
}

// Initial returns the first table schema (schema-id 0) of a table whose
// top-level columns after _kafka are columns, and its last column id (the
// highest field id, the table metadata's last-column-id).
//
// The ids of columns are placeholders and are ignored: _kafka takes field
// ids 1-10 and the columns take ids from 11 on in depth-first pre-order, as
// [codec.TableSchema] assigns them. Names, types, required-ness and docs are
// kept; initial and write defaults are dropped. Errors: no column (but for
// a protobuf value: a message without fields), a column
// without a name or type, two fields of one struct with one name, a column
// named _kafka, formats or a type codec.TableSchema refuses (valueFormat
// is json or a registry format).
func Initial(keyFormat, valueFormat codec.Format, columns []iceberg.NestedField) (schema *iceberg.Schema, lastColumnID int, err error) {
	// A Protobuf message without fields (a topic of KeepAlive {} records)
	// has no value columns: its rows are _kafka's, and fields the message
	// gains later become columns by evolution.
	if len(columns) == 0 && valueFormat != codec.Protobuf {
		return nil, 0, errors.New("table schema: no column besides _kafka")
	}
	// codec.TableSchema assigns the real ids; the placeholders only need to
	// be distinct, because iceberg.NewSchema panics on a duplicate id.
	ids := freshIDs{}
	declared := make([]iceberg.NestedField, 0, len(columns))
	if err := uniqueNames(columns, ""); err != nil {
		return nil, 0, err
	}
	for _, c := range columns {
		if c.Name == codec.KafkaColumn {
			return nil, 0, reservedError()
		}
		f, err := ids.field(c, c.Name, c.Required)
		if err != nil {
			return nil, 0, err
		}
		declared = append(declared, f)
	}
	s, err := codec.TableSchema(keyFormat, valueFormat, iceberg.NewSchema(0, declared...))
	if err != nil {
		return nil, 0, err
	}
	return s, s.HighestFieldID(), nil
}

// Evolve merges incoming, the top-level columns of a schema the table has
// not seen (after _kafka; their ids are placeholders and ignored), into
// current, the table's latest schema (_kafka first). lastColumnID is the
// table metadata's last-column-id (at least current's highest field id).
//
// It returns next, with schema-id current.ID+1, and the new last column id;
// or current itself, lastColumnID and changed=false when current takes
// incoming's values as it is. The rules are the Iceberg spec's "Schema
// Evolution", applied at every depth:
//
//   - Fields are matched by name within a struct; a list element, a map key
//     and a map value by position. A rename is a removal and an addition.
//   - Same type: kept. Incoming narrower than current (int into long, float
//     into double, decimal(P,S) into decimal(P',S) with P' ≥ P): kept.
//     Incoming wider (long for int, double for float, decimal(P',S) for
//     decimal(P,S) with P' > P): the field is promoted, keeping its id.
//   - Incoming optional where current is required (fields, list elements,
//     map values): it becomes optional. Incoming required where current is
//     optional: it stays optional.
//   - A field current has and incoming lacks is kept, with its id; a
//     required one becomes optional, since the new records lack it. So a
//     field removed and later added again finds its old id.
//   - A field incoming has and current lacks is added, optional whatever
//     incoming says (existing rows have no value for it, and Iceberg v2 has
//     no default to read instead), with fresh ids lastColumnID+1, … for it
//     and the fields nested in its type, in depth-first pre-order; nested
//     fields keep incoming's required-ness. New fields follow the existing
//     ones of their struct, in incoming's order.
//   - A field doc replaces an empty doc only, and only in a schema that
//     changes for another reason: a doc alone makes no new version.
//   - Identifier field ids are carried over while their field stays
//     required.
//
// Anything else (string→int, long→int, struct→primitive, list↔map, a
// decimal scale or fixed length change, any change of a map key) returns an
// [*IncompatibleError] and no schema. Other errors: current is nil or does
// not start with _kafka, lastColumnID is below its highest field id, an
// incoming top-level field is named _kafka, a field has no name or type,
// or two fields of one incoming struct share a name (the last four wrap
// ErrInvalidField).
//
// Evolve is a pure function of its arguments: every node computes the same
// next schema and ids.
func Evolve(current *iceberg.Schema, lastColumnID int, incoming []iceberg.NestedField) (next *iceberg.Schema, newLastColumnID int, changed bool, err error) {
	m, fields, err := merge(current, lastColumnID, incoming)
	if err != nil {
		return nil, 0, false, err
	}
	if m.first == nil {
		return current, lastColumnID, false, nil
	}
	next = iceberg.NewSchema(current.ID+1, fields...)
	idents := []int{}
	for _, id := range current.IdentifierFieldIDs {
		if f, ok := next.FindFieldByID(id); ok && f.Required {
			idents = append(idents, id)
		}
	}
	next.IdentifierFieldIDs = idents
	return next, m.ids.last, true, nil
}

// Compatible reports whether current takes the values of incoming as it is:
// nil exactly when [Evolve] would return changed=false and no error. An
// *IncompatibleError with Evolvable true names the first change Evolve
// would make (in the order of current's fields, then incoming's new ones);
// with Evolvable false, the change Evolve refuses. Other errors as Evolve's.
func Compatible(current *iceberg.Schema, incoming []iceberg.NestedField) error {
	if current == nil {
		return errors.New("current schema is nil")
	}
	m, _, err := merge(current, current.HighestFieldID(), incoming)
	if err != nil {
		return err
	}
	if m.first != nil {
		return m.first
	}
	return nil
}

func reservedError() error {
	return invalid(fmt.Errorf("field %s: the name is reserved for Kafka metadata", codec.KafkaColumn))
}

// merge checks the arguments of Evolve and merges incoming into current's
// columns. It returns the merged top-level fields, _kafka first.
func merge(current *iceberg.Schema, lastColumnID int, incoming []iceberg.NestedField) (*merger, []iceberg.NestedField, error) {
	if current == nil {
		return nil, nil, errors.New("current schema is nil")
	}
	cur := current.Fields()
	if len(cur) == 0 || cur[0].Name != codec.KafkaColumn {
		return nil, nil, fmt.Errorf("current schema %d does not start with %s", current.ID, codec.KafkaColumn)
	}
	if high := current.HighestFieldID(); lastColumnID < high {
		return nil, nil, fmt.Errorf("last column id %d is below the highest field id %d of schema %d", lastColumnID, high, current.ID)
	}
	for _, f := range incoming {
		if f.Name == codec.KafkaColumn {
			return nil, nil, reservedError()
		}
	}
	m := &merger{ids: freshIDs{last: lastColumnID}}
	cols, err := m.fields("", cur[1:], incoming)
	if err != nil {
		return nil, nil, err
	}
	return m, append([]iceberg.NestedField{cur[0]}, cols...), nil
}

// merger merges an incoming schema into a table schema. It never modifies
// the table schema's types: every changed struct, list or map is a new one.
type merger struct {
	ids freshIDs
	// first is the first change made, in walk order; nil while the table
	// schema takes the incoming one as it is.
	first *IncompatibleError
}

func (m *merger) change(path, from, to string) {
	if m.first == nil {
		m.first = &IncompatibleError{Path: path, From: from, To: to, Reason: ReasonEvolve, Evolvable: true}
	}
}

// fields merges the fields of one struct at prefix: cur's fields in their
// order, then the fields only inc has, in inc's order.
func (m *merger) fields(prefix string, cur, inc []iceberg.NestedField) ([]iceberg.NestedField, error) {
	if err := uniqueNames(inc, prefix); err != nil {
		return nil, err
	}
	byName := make(map[string]iceberg.NestedField, len(inc))
	for _, f := range inc {
		byName[f.Name] = f
	}
	out := make([]iceberg.NestedField, 0, len(cur)+len(inc))
	have := make(map[string]bool, len(cur))
	for _, c := range cur {
		have[c.Name] = true
		path := join(prefix, c.Name)
		i, ok := byName[c.Name]
		if !ok {
			if c.Required {
				m.change(path, "required "+typeString(c.Type), "")
				c.Required = false
			}
			out = append(out, c)
			continue
		}
		f, err := m.field(path, c, i)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	for _, i := range inc {
		if have[i.Name] {
			continue
		}
		path := join(prefix, i.Name)
		f, err := m.ids.field(i, path, false)
		if err != nil {
			return nil, err
		}
		m.change(path, "", typeString(i.Type))
		out = append(out, f)
	}
	return out, nil
}

// field merges incoming field i into table field c, both at path.
func (m *merger) field(path string, c, i iceberg.NestedField) (iceberg.NestedField, error) {
	t, err := m.typ(path, c.Type, i.Type)
	if err != nil {
		return iceberg.NestedField{}, err
	}
	out := c
	out.Type = t
	if c.Required && !i.Required {
		m.change(path, "required "+typeString(c.Type), "optional "+typeString(i.Type))
		out.Required = false
	}
	if out.Doc == "" {
		out.Doc = i.Doc
	}
	return out, nil
}

// typ merges incoming type i into table type c at path.
func (m *merger) typ(path string, c, i iceberg.Type) (iceberg.Type, error) {
	if c == nil || i == nil {
		return nil, invalid(fmt.Errorf("field %s: no type", path))
	}
	switch ct := c.(type) {
	case *iceberg.StructType:
		it, ok := i.(*iceberg.StructType)
		if !ok {
			return nil, refuse(path, c, i, ReasonPromotion)
		}
		fields, err := m.fields(path, ct.FieldList, it.FieldList)
		if err != nil {
			return nil, err
		}
		return &iceberg.StructType{FieldList: fields}, nil
	case *iceberg.ListType:
		it, ok := i.(*iceberg.ListType)
		if !ok {
			return nil, refuse(path, c, i, ReasonPromotion)
		}
		epath := path + ".element"
		elem, err := m.typ(epath, ct.Element, it.Element)
		if err != nil {
			return nil, err
		}
		req := m.required(epath, ct.ElementRequired, it.ElementRequired, ct.Element, it.Element)
		return &iceberg.ListType{ElementID: ct.ElementID, Element: elem, ElementRequired: req}, nil
	case *iceberg.MapType:
		it, ok := i.(*iceberg.MapType)
		if !ok {
			return nil, refuse(path, c, i, ReasonPromotion)
		}
		if err := keyTakes(path+".key", ct.KeyType, it.KeyType); err != nil {
			return nil, err
		}
		vpath := path + ".value"
		val, err := m.typ(vpath, ct.ValueType, it.ValueType)
		if err != nil {
			return nil, err
		}
		req := m.required(vpath, ct.ValueRequired, it.ValueRequired, ct.ValueType, it.ValueType)
		return &iceberg.MapType{KeyID: ct.KeyID, KeyType: ct.KeyType, ValueID: ct.ValueID, ValueType: val, ValueRequired: req}, nil
	default:
		switch {
		case c.Equals(i), promotes(i, c):
			return c, nil
		case promotes(c, i):
			m.change(path, typeString(c), typeString(i))
			return i, nil
		}
		return nil, refuse(path, c, i, ReasonPromotion)
	}
}

// required merges the required-ness of a list element or map value.
func (m *merger) required(path string, cur, inc bool, ct, it iceberg.Type) bool {
	if cur && !inc {
		m.change(path, "required "+typeString(ct), "optional "+typeString(it))
		return false
	}
	return cur
}

// keyTakes checks that a map key of type c takes keys of type i unchanged:
// the same type or a narrower one.
func keyTakes(path string, c, i iceberg.Type) error {
	var m merger
	if _, err := m.typ(path, c, i); err != nil {
		var ie *IncompatibleError
		if errors.As(err, &ie) {
			return refuse(path, c, i, ReasonMapKey)
		}
		return err
	}
	if m.first != nil {
		return refuse(path, c, i, ReasonMapKey)
	}
	return nil
}

func refuse(path string, c, i iceberg.Type, reason string) *IncompatibleError {
	return &IncompatibleError{Path: path, From: typeString(c), To: typeString(i), Reason: reason}
}

// promotes reports whether Iceberg promotes a column of type from to type
// to: int→long, float→double, decimal(P,S)→decimal(P',S) with P' > P (spec
// "Schema Evolution"; format v3's date→timestamp is left out, since Mink
// writes v2 tables).
func promotes(from, to iceberg.Type) bool {
	switch f := from.(type) {
	case iceberg.Int32Type:
		_, ok := to.(iceberg.Int64Type)
		return ok
	case iceberg.Float32Type:
		_, ok := to.(iceberg.Float64Type)
		return ok
	case iceberg.DecimalType:
		t, ok := to.(iceberg.DecimalType)
		return ok && t.Scale() == f.Scale() && t.Precision() > f.Precision()
	}
	return false
}

// freshIDs assigns field ids after last, in depth-first pre-order: a field
// takes the next id, then the fields nested in its type (a list's element;
// a map's key and value, then the key's and the value's nested fields; a
// struct's fields) take theirs before its next sibling, as codec.TableSchema
// does.
//
// It refuses types nested deeper than codec.MaxTypeDepth below where it
// starts (the top level for Initial), as codec.TableSchema does, before
// building the path of every level: a declared schema reaches it first.
// Evolve's incoming types come from the registry converters and JSON
// inference, which bound their depth the same way.
type freshIDs struct {
	last  int
	depth int // types nested above the one being copied
}

// enter goes one level down to the type at path; leave comes back up.
func (a *freshIDs) enter(path string) error {
	if a.depth == codec.MaxTypeDepth {
		return invalid(fmt.Errorf("field %s: types nested deeper than %d levels: %w", path, codec.MaxTypeDepth, codec.ErrUnsupported))
	}
	a.depth++
	return nil
}

func (a *freshIDs) leave() { a.depth-- }

// nested is typ one level down: a list element, map key or map value.
func (a *freshIDs) nested(t iceberg.Type, path string) (iceberg.Type, error) {
	if err := a.enter(path); err != nil {
		return nil, err
	}
	defer a.leave()
	return a.typ(t, path)
}

func (a *freshIDs) next() int {
	a.last++
	return a.last
}

// field copies f with fresh ids and the given required-ness; docs are kept,
// defaults dropped.
func (a *freshIDs) field(f iceberg.NestedField, path string, required bool) (iceberg.NestedField, error) {
	if f.Name == "" {
		return iceberg.NestedField{}, invalid(fmt.Errorf("field %s: a field has no name", path))
	}
	if err := a.enter(path); err != nil {
		return iceberg.NestedField{}, err
	}
	defer a.leave()
	id := a.next()
	t, err := a.typ(f.Type, path)
	if err != nil {
		return iceberg.NestedField{}, err
	}
	return iceberg.NestedField{ID: id, Name: f.Name, Type: t, Required: required, Doc: f.Doc}, nil
}

func (a *freshIDs) typ(t iceberg.Type, path string) (iceberg.Type, error) {
	switch t := t.(type) {
	case nil:
		return nil, invalid(fmt.Errorf("field %s: no type", path))
	case *iceberg.StructType:
		if err := uniqueNames(t.FieldList, path); err != nil {
			return nil, err
		}
		fields := make([]iceberg.NestedField, 0, len(t.FieldList))
		for _, f := range t.FieldList {
			nf, err := a.field(f, join(path, f.Name), f.Required)
			if err != nil {
				return nil, err
			}
			fields = append(fields, nf)
		}
		return &iceberg.StructType{FieldList: fields}, nil
	case *iceberg.ListType:
		id := a.next()
		elem, err := a.nested(t.Element, path+".element")
		if err != nil {
			return nil, err
		}
		return &iceberg.ListType{ElementID: id, Element: elem, ElementRequired: t.ElementRequired}, nil
	case *iceberg.MapType:
		kid, vid := a.next(), a.next()
		key, err := a.nested(t.KeyType, path+".key")
		if err != nil {
			return nil, err
		}
		val, err := a.nested(t.ValueType, path+".value")
		if err != nil {
			return nil, err
		}
		// Optional values, as codec.TableSchema makes them: iceberg-go
		// v0.7.0 cannot scan required map values.
		return &iceberg.MapType{KeyID: kid, KeyType: key, ValueID: vid, ValueType: val, ValueRequired: false}, nil
	default:
		return t, nil
	}
}

// uniqueNames checks that no two fields of the struct at prefix share a
// name: one value could fill only one of them (Java Iceberg refuses such a
// schema too: "multiple fields for name").
func uniqueNames(fields []iceberg.NestedField, prefix string) error {
	seen := make(map[string]bool, len(fields))
	for _, f := range fields {
		if f.Name == "" {
			return invalid(fmt.Errorf("field %s: a field has no name", join(prefix, "<empty>")))
		}
		if seen[f.Name] {
			return invalid(fmt.Errorf("field %s: the name appears twice in one struct", join(prefix, f.Name)))
		}
		seen[f.Name] = true
	}
	return nil
}

func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// typeString writes t as Iceberg does but without field ids or docs, so
// that an error reads the same whatever ids the incoming schema carried.
func typeString(t iceberg.Type) string {
	switch t := t.(type) {
	case nil:
		return "no type"
	case *iceberg.StructType:
		var b strings.Builder
		b.WriteString("struct<")
		for n, f := range t.FieldList {
			if n > 0 {
				b.WriteString(", ")
			}
			b.WriteString(f.Name)
			if f.Required {
				b.WriteString(": required ")
			} else {
				b.WriteString(": optional ")
			}
			b.WriteString(typeString(f.Type))
		}
		b.WriteString(">")
		return b.String()
	case *iceberg.ListType:
		return "list<" + typeString(t.Element) + ">"
	case *iceberg.MapType:
		return "map<" + typeString(t.KeyType) + ", " + typeString(t.ValueType) + ">"
	default:
		return t.String()
	}
}
