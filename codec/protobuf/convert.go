package protobuf

import (
	"fmt"

	"github.com/apache/iceberg-go"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/minkhq/mink/codec/wire"
)

// Convert returns the Iceberg type of values written with s at the
// Confluent message index path indexes: always a *iceberg.StructType, the
// selected message's fields (the table's value columns).
//
// Field ids are placeholders 1..n in pre-order (a field, then what is
// nested in it — list element, map key then value, struct fields — then
// its next sibling); the caller reassigns them by field path. Names are
// the .proto field names (not json_name). The mapping is
// docs/formats-protobuf.md.
//
// A message field whose message has no fields (google.protobuf.Empty
// too) is a boolean, true where present; google.protobuf.Struct, Value and
// ListValue, and a field whose message is one the path is inside already
// (recursion), are a string holding the value's JSON (Protobuf JSON
// mapping, proto field names; see json.go). The selected message may have
// no fields: then there are no value columns.
//
// Errors: a schema that does not compile, a message index out of range,
// or messages nested deeper than MaxDepth
// (`field a.a….a: messages nested deeper than 64 levels`).
func Convert(s *wire.Schema, indexes []int) (iceberg.Type, error) {
	md, err := message(s, indexes)
	if err != nil {
		return nil, err
	}
	c := converter{}
	return c.message(md, "")
}

// MaxDepth is the deepest nesting of message fields Convert accepts: the
// selected message's fields are at level 1, a message field's fields one
// level below it. Deeper is refused before the nested message is read:
// each level's path is as long as the levels above it, and query engines
// choke on nested types far earlier.
const MaxDepth = 64

type converter struct {
	id    int
	stack []protoreflect.FullName // messages being converted, for recursion
}

func (c *converter) next() int { c.id++; return c.id }

func (c *converter) message(md protoreflect.MessageDescriptor, path string) (*iceberg.StructType, error) {
	if len(c.stack) == MaxDepth {
		return nil, fmt.Errorf("field %s: messages nested deeper than %d levels", path, MaxDepth)
	}
	c.stack = append(c.stack, md.FullName())
	defer func() { c.stack = c.stack[:len(c.stack)-1] }()
	fds := md.Fields()
	st := &iceberg.StructType{FieldList: make([]iceberg.NestedField, 0, fds.Len())}
	for i := range fds.Len() {
		fd := fds.Get(i)
		p := join(path, string(fd.Name()))
		f := iceberg.NestedField{ID: c.next(), Name: string(fd.Name()), Required: fieldRequired(fd)}
		var err error
		switch {
		case fd.IsMap():
			// Values optional although a map entry always has one (its zero
			// value when unset): iceberg-go v0.7.0 cannot scan required map
			// values (see codec.TableSchema).
			mt := &iceberg.MapType{KeyID: c.next(), ValueID: c.next(), ValueRequired: false}
			if mt.KeyType, err = c.value(fd.MapKey(), p+".key"); err != nil {
				return nil, err
			}
			if mt.ValueType, err = c.value(fd.MapValue(), p+".value"); err != nil {
				return nil, err
			}
			f.Type = mt
		case fd.IsList():
			lt := &iceberg.ListType{ElementID: c.next(), ElementRequired: true}
			if lt.Element, err = c.value(fd, p+".element"); err != nil {
				return nil, err
			}
			f.Type = lt
		default:
			if f.Type, err = c.value(fd, p); err != nil {
				return nil, err
			}
		}
		st.FieldList = append(st.FieldList, f)
	}
	return st, nil
}

// value is the Iceberg type of one value of fd (an element of a repeated
// field, a map key or value, or a singular field).
func (c *converter) value(fd protoreflect.FieldDescriptor, path string) (iceberg.Type, error) {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		// A group (proto2) or delimited message (editions) is a message
		// written between start and end tags: the same type.
		md := fd.Message()
		switch shapeOf(md, c.stack) {
		case wkTimestamp:
			return iceberg.PrimitiveTypes.TimestampTz, nil
		case wkDuration:
			return iceberg.PrimitiveTypes.Int64, nil
		case wkWrapper:
			return primitive(md.Fields().ByNumber(1).Kind()), nil
		case shMarker:
			return iceberg.PrimitiveTypes.Bool, nil
		case shJSON:
			return iceberg.PrimitiveTypes.String, nil
		}
		return c.message(md, path)
	}
	return primitive(fd.Kind()), nil
}

// primitive maps a scalar kind (not message or group).
func primitive(k protoreflect.Kind) iceberg.Type {
	switch k {
	case protoreflect.BoolKind:
		return iceberg.PrimitiveTypes.Bool
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return iceberg.PrimitiveTypes.Int32
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind,
		protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return iceberg.PrimitiveTypes.Int64
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		// 0..18446744073709551615 needs 20 digits; a long would wrap.
		return iceberg.DecimalTypeOf(20, 0)
	case protoreflect.FloatKind:
		return iceberg.PrimitiveTypes.Float32
	case protoreflect.DoubleKind:
		return iceberg.PrimitiveTypes.Float64
	case protoreflect.StringKind, protoreflect.EnumKind:
		return iceberg.PrimitiveTypes.String
	case protoreflect.BytesKind:
		return iceberg.PrimitiveTypes.Binary
	}
	panic(fmt.Sprintf("protobuf: no primitive for kind %v", k))
}

// fieldRequired: a field without presence (proto3 implicit scalars,
// repeated, maps) is never null, absent reads as the zero value; proto2
// required is required; everything with presence is optional.
func fieldRequired(fd protoreflect.FieldDescriptor) bool {
	return fd.Cardinality() == protoreflect.Required || !fd.HasPresence()
}

type wellKnown uint8

const (
	wkNone wellKnown = iota
	wkTimestamp
	wkDuration
	wkWrapper
	// shMarker: a message without fields (google.protobuf.Empty, a
	// KeepAlive {}, a oneof arm that only marks a case). An Iceberg struct
	// needs a field, so it is a boolean: true where the message is present.
	shMarker
	// shJSON: google.protobuf.Struct, Value and ListValue (schemaless
	// JSON), and a message field whose message is being mapped already
	// (recursion): its JSON text per the Protobuf JSON mapping (json.go).
	shJSON
)

func wellKnownOf(md protoreflect.MessageDescriptor) wellKnown {
	switch md.FullName() {
	case "google.protobuf.Timestamp":
		return wkTimestamp
	case "google.protobuf.Duration":
		return wkDuration
	case "google.protobuf.DoubleValue", "google.protobuf.FloatValue",
		"google.protobuf.Int64Value", "google.protobuf.UInt64Value",
		"google.protobuf.Int32Value", "google.protobuf.UInt32Value",
		"google.protobuf.BoolValue", "google.protobuf.StringValue",
		"google.protobuf.BytesValue":
		return wkWrapper
	case "google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.ListValue":
		return shJSON
	}
	return wkNone
}

// shapeOf says how a message-typed field of message md is held, given
// the messages being mapped around it (stack, outermost first): a
// well-known type's own mapping, a marker, JSON text, or (wkNone) a
// struct of its fields.
func shapeOf(md protoreflect.MessageDescriptor, stack []protoreflect.FullName) wellKnown {
	if wk := wellKnownOf(md); wk != wkNone {
		return wk
	}
	if md.Fields().Len() == 0 {
		return shMarker
	}
	for _, n := range stack {
		if n == md.FullName() {
			return shJSON
		}
	}
	return wkNone
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
