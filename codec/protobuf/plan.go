package protobuf

import (
	"fmt"
	"math"

	"github.com/apache/iceberg-go"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// reader says how one value is read from the wire and kept in a val.
type reader uint8

const (
	rInt32     reader = iota // varint, must fit int32; u = int64 bits
	rInt64                   // varint; u = int64 bits
	rUint32                  // varint, must fit uint32
	rUint64                  // varint
	rSint32                  // zig-zag varint, must fit int32; u = int64 bits
	rSint64                  // zig-zag varint; u = int64 bits
	rFixed32                 // u = uint32
	rSfixed32                // u = int64 bits
	rFixed64                 // u = uint64
	rSfixed64                // u = int64 bits
	rBool                    // varint; u = 0 or 1
	rEnum                    // varint, must fit int32; u = int64 bits
	rFloat                   // u = float32 bits
	rDouble                  // u = float64 bits
	rString                  // UTF-8 checked; u = offset in the payload, n = length
	rBytes                   // u = offset, n = length
	rMessage                 // u = frame base
	rTimestamp               // google.protobuf.Timestamp: u = seconds, n = nanos (int32 bits)
	rDuration                // google.protobuf.Duration: as rTimestamp
	rWrapper                 // google.protobuf.*Value: the inner value, read by vnode.inner
	rMarker                  // a message without fields: u = 1 (present)
	rJSON                    // Struct, Value, ListValue, a recursive message: u = index in Decoder.texts
)

// out is the Arrow builder a value is appended to.
type out uint8

const (
	oInt32 out = iota
	oInt64
	oFloat32
	oFloat64
	oBool
	oDecimal
	oString
	oBinary
	oTimestamp
	oStruct
)

// vnode is how one value (a singular field, a list element, a map key or
// value) is read and appended.
type vnode struct {
	r     reader
	inner reader // rWrapper: the wrapped value
	o     out
	wt    protowire.Type                 // wire type of one value
	msg   *msgPlan                       // rMessage
	md    protoreflect.MessageDescriptor // rJSON
	enum  map[int32]string
}

type card uint8

const (
	cSingle card = iota
	cList
	cMap
)

type presence uint8

const (
	pImplicit presence = iota // absent reads as the zero value
	pNullable                 // absent reads as null
	pRequired                 // proto2 required: absent is an error
)

// field is one target field of a message.
type field struct {
	path     string
	num      protowire.Number
	card     card
	presence presence
	absent   bool // the writer has no such field: always null
	packable bool // cList of a numeric scalar: packed encoding allowed
	oneof    int  // index in msgPlan.oneofs, or -1
	val      vnode
	key      vnode // cMap
}

// msgPlan is a message as the table holds it: its target fields in table
// order, found by field number.
type msgPlan struct {
	name      protoreflect.FullName
	path      string
	fields    []*field
	small     []int32 // field number → index+1, for numbers < len(small)
	big       map[protowire.Number]int
	oneofs    [][]int // the target indexes of each oneof's members
	needCheck bool    // a proto2 required field somewhere inside
	hasMap    bool    // a map field: entries to de-duplicate
	hasJSON   bool    // an rJSON value somewhere inside: texts to render
}

func (m *msgPlan) lookup(num protowire.Number) int {
	if int(num) < len(m.small) {
		return int(m.small[num]) - 1
	}
	if i, ok := m.big[num]; ok {
		return i
	}
	return -1
}

type compiler struct {
	stack []protoreflect.FullName
}

// message compiles md into the table's struct st.
func (c *compiler) message(md protoreflect.MessageDescriptor, st *iceberg.StructType, path string) (*msgPlan, error) {
	c.stack = append(c.stack, md.FullName())
	defer func() { c.stack = c.stack[:len(c.stack)-1] }()

	m := &msgPlan{name: md.FullName(), path: path}
	fds := md.Fields()
	seen := make([]bool, fds.Len())
	oneofIdx := map[protoreflect.FullName]int{}
	maxNum := 0
	for _, tf := range st.FieldList {
		p := join(path, tf.Name)
		fd := fds.ByName(protoreflect.Name(tf.Name))
		if fd == nil {
			if tf.Required {
				return nil, fmt.Errorf("field %s: required in the table, missing in the writer's message %s", p, md.FullName())
			}
			m.fields = append(m.fields, &field{path: p, absent: true, oneof: -1})
			continue
		}
		seen[fd.Index()] = true
		f, err := c.field(fd, tf, p)
		if err != nil {
			return nil, err
		}
		if od := fd.ContainingOneof(); od != nil && !od.IsSynthetic() {
			i, ok := oneofIdx[od.FullName()]
			if !ok {
				i = len(m.oneofs)
				oneofIdx[od.FullName()] = i
				m.oneofs = append(m.oneofs, nil)
			}
			f.oneof = i
			m.oneofs[i] = append(m.oneofs[i], len(m.fields))
		}
		if f.presence == pRequired || (f.val.msg != nil && f.val.msg.needCheck) {
			m.needCheck = true
		}
		m.hasMap = m.hasMap || f.card == cMap
		m.hasJSON = m.hasJSON || f.val.r == rJSON || (f.val.msg != nil && f.val.msg.hasJSON)
		maxNum = max(maxNum, int(f.num))
		m.fields = append(m.fields, f)
	}
	for i := range fds.Len() {
		if !seen[i] {
			return nil, fmt.Errorf("field %s: in the writer's message %s, not in the table", join(path, string(fds.Get(i).Name())), md.FullName())
		}
	}
	if maxNum < 1024 {
		m.small = make([]int32, maxNum+1)
	} else {
		m.big = map[protowire.Number]int{}
	}
	for i, f := range m.fields {
		switch {
		case f.absent:
		case m.small != nil:
			m.small[f.num] = int32(i + 1)
		default:
			m.big[f.num] = i
		}
	}
	return m, nil
}

func (c *compiler) field(fd protoreflect.FieldDescriptor, tf iceberg.NestedField, p string) (*field, error) {
	f := &field{path: p, num: fd.Number(), oneof: -1}
	switch {
	case fd.Cardinality() == protoreflect.Required:
		f.presence = pRequired
	case fd.HasPresence():
		f.presence = pNullable
	}
	if tf.Required && f.presence == pNullable {
		return nil, fmt.Errorf("field %s: optional in the writer, required in the table", p)
	}
	var err error
	switch {
	case fd.IsMap():
		mt, ok := tf.Type.(*iceberg.MapType)
		if !ok {
			return nil, fmt.Errorf("field %s: writer map, table %s", p, tf.Type)
		}
		f.card = cMap
		if fd.MapValue().Kind() == protoreflect.GroupKind {
			return nil, fmt.Errorf("field %s: a map value encoded as a group is not supported", p)
		}
		if f.key, err = c.value(fd.MapKey(), mt.KeyType, p+".key"); err != nil {
			return nil, err
		}
		if f.val, err = c.value(fd.MapValue(), mt.ValueType, p+".value"); err != nil {
			return nil, err
		}
	case fd.IsList():
		lt, ok := tf.Type.(*iceberg.ListType)
		if !ok {
			return nil, fmt.Errorf("field %s: writer list, table %s", p, tf.Type)
		}
		f.card = cList
		if f.val, err = c.value(fd, lt.Element, p+".element"); err != nil {
			return nil, err
		}
		f.packable = f.val.wt != protowire.BytesType && f.val.wt != protowire.StartGroupType
	default:
		if f.val, err = c.value(fd, tf.Type, p); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// readers maps scalar kinds to their reader and wire type.
var readers = map[protoreflect.Kind]struct {
	r  reader
	wt protowire.Type
}{
	protoreflect.Int32Kind:    {rInt32, protowire.VarintType},
	protoreflect.Int64Kind:    {rInt64, protowire.VarintType},
	protoreflect.Uint32Kind:   {rUint32, protowire.VarintType},
	protoreflect.Uint64Kind:   {rUint64, protowire.VarintType},
	protoreflect.Sint32Kind:   {rSint32, protowire.VarintType},
	protoreflect.Sint64Kind:   {rSint64, protowire.VarintType},
	protoreflect.BoolKind:     {rBool, protowire.VarintType},
	protoreflect.EnumKind:     {rEnum, protowire.VarintType},
	protoreflect.Fixed32Kind:  {rFixed32, protowire.Fixed32Type},
	protoreflect.Sfixed32Kind: {rSfixed32, protowire.Fixed32Type},
	protoreflect.FloatKind:    {rFloat, protowire.Fixed32Type},
	protoreflect.Fixed64Kind:  {rFixed64, protowire.Fixed64Type},
	protoreflect.Sfixed64Kind: {rSfixed64, protowire.Fixed64Type},
	protoreflect.DoubleKind:   {rDouble, protowire.Fixed64Type},
	protoreflect.StringKind:   {rString, protowire.BytesType},
	protoreflect.BytesKind:    {rBytes, protowire.BytesType},
}

// value compiles one value of fd (ignoring its cardinality) into the
// table type t: the same type or an Iceberg promotion of the writer's.
func (c *compiler) value(fd protoreflect.FieldDescriptor, t iceberg.Type, p string) (vnode, error) {
	var v vnode
	var w iceberg.Type // the writer's Iceberg type, for primitives
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		md := fd.Message()
		v.wt = protowire.BytesType
		if fd.Kind() == protoreflect.GroupKind {
			v.wt = protowire.StartGroupType // read by Decoder.msgAt
		}
		switch shapeOf(md, c.stack) {
		case shMarker:
			v.r, w = rMarker, iceberg.PrimitiveTypes.Bool
		case shJSON:
			v.r, v.md, w = rJSON, md, iceberg.PrimitiveTypes.String
		case wkTimestamp:
			v.r, w = rTimestamp, iceberg.PrimitiveTypes.TimestampTz
		case wkDuration:
			v.r, w = rDuration, iceberg.PrimitiveTypes.Int64
		case wkWrapper:
			inner := md.Fields().ByNumber(1)
			v.r, v.inner, w = rWrapper, readers[inner.Kind()].r, primitive(inner.Kind())
		default:
			st, ok := t.(*iceberg.StructType)
			if !ok {
				return v, fmt.Errorf("field %s: writer message %s, table %s", p, md.FullName(), t)
			}
			m, err := c.message(md, st, p)
			if err != nil {
				return v, err
			}
			v.r, v.o, v.msg = rMessage, oStruct, m
			return v, nil
		}
	default:
		rd, ok := readers[fd.Kind()]
		if !ok {
			return v, fmt.Errorf("field %s: unsupported kind %v", p, fd.Kind())
		}
		v.r, v.wt, w = rd.r, rd.wt, primitive(fd.Kind())
		if fd.Kind() == protoreflect.EnumKind {
			vals := fd.Enum().Values()
			v.enum = make(map[int32]string, vals.Len())
			for i := range vals.Len() {
				ev := vals.Get(i)
				if _, dup := v.enum[int32(ev.Number())]; !dup { // allow_alias: the first name
					v.enum[int32(ev.Number())] = string(ev.Name())
				}
			}
		}
	}
	if !promotes(w, t) {
		return v, fmt.Errorf("field %s: writer %s, table %s", p, w, t)
	}
	switch t := t.(type) {
	case iceberg.Int32Type:
		v.o = oInt32
	case iceberg.Int64Type:
		v.o = oInt64
	case iceberg.Float32Type:
		v.o = oFloat32
	case iceberg.Float64Type:
		v.o = oFloat64
	case iceberg.BooleanType:
		v.o = oBool
	case iceberg.DecimalType:
		v.o = oDecimal
	case iceberg.StringType:
		v.o = oString
	case iceberg.BinaryType:
		v.o = oBinary
	case iceberg.TimestampTzType:
		v.o = oTimestamp
	default:
		return v, fmt.Errorf("field %s: table type %s", p, t)
	}
	return v, nil
}

// promotes reports whether a writer value of type w can be stored exactly
// in a column of type t: the same type, or an Iceberg type promotion
// (Iceberg spec, Schema Evolution: int→long, float→double,
// decimal(P,S)→decimal(P',S) with P' ≥ P).
func promotes(w, t iceberg.Type) bool {
	if w.Equals(t) {
		return true
	}
	switch w := w.(type) {
	case iceberg.Int32Type:
		_, ok := t.(iceberg.Int64Type)
		return ok
	case iceberg.Float32Type:
		_, ok := t.(iceberg.Float64Type)
		return ok
	case iceberg.DecimalType:
		td, ok := t.(iceberg.DecimalType)
		return ok && td.Scale() == w.Scale() && td.Precision() >= w.Precision()
	}
	return false
}

// Bounds of seconds whose microseconds fit an int64.
const (
	maxSeconds = math.MaxInt64 / 1_000_000
	minSeconds = math.MinInt64 / 1_000_000
)
