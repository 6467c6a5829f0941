package avro

import (
	"fmt"

	"github.com/apache/iceberg-go"
	hamba "github.com/hamba/avro/v2"
)

// op is how one writer value is read (Avro spec 1.12, "Binary Encoding")
// and converted for its table column.
type op uint8

const (
	opBool        op = iota + 1
	opInt            // int → int32 value
	opIntLong        // int → long (promotion)
	opDate           // int days
	opTimeMillis     // int ms of the day → µs
	opLong           // long → long, timestamp(tz) µs
	opTimeMicros     // long µs of the day
	opTsMillis       // long ms → µs
	opTsNanos        // long ns → µs when whole
	opFloat          // float → float
	opFloatDouble    // float → double (promotion)
	opDouble
	opString
	opUUIDString
	opBytes
	opDecimalBytes
	opFixed
	opDecimalFixed
	opUUIDFixed
	opEnum
	opRecord
	opArray
	opMap
	opUnion
	opJSON // a record inside itself: its Avro JSON text into a string
)

// app is the Arrow builder a node appends to, from the table's type.
type app uint8

const (
	aBool app = iota + 1
	aInt32
	aInt64
	aFloat32
	aFloat64
	aDate
	aTime
	aTimestamp
	aString
	aBinary
	aFixed
	aUUID
	aDecimal
	aStruct
	aList
	aMap
	aUnion // a complex union's struct: tag, field0, field1, ...
)

// node is one writer value of the decode plan, compiled against the
// table's type at the same path.
type node struct {
	op   op
	app  app
	path string // for errors: "customer.id", "items.element"

	size    int      // fixed: bytes
	prec    int32    // decimal: the writer's precision
	symbols [][]byte // enum
	minSize int      // bytes the smallest encoded value takes

	// record: fields in writer order; slot is each one's position among
	// the table's fields. direct: the table has exactly these fields in
	// this order, so the tape needs no slots.
	fields []*node
	slot   int
	ntable int
	direct bool
	table  []*node // the table's fields in order: a writer node, or nil (append null)

	elem *node // array element, map value

	// record: the defaults of table fields the writer lacks, by table
	// position (nil: null).
	defaults []*Decoder

	// opJSON: the writer's type, written as JSON text.
	schema hamba.Schema

	// union: one node per writer branch, nil for null. For a complex
	// union: tags (the index among non-null branches), the table field
	// of each tag, and the position of the tag field.
	branches    []*node
	tags        []int
	tagField    []int
	tagPos      int
	tableFields int
}

// compiler compiles a writer schema against the table's type.
type compiler struct {
	open   map[string]bool // writer records being compiled, by full name
	fields Fields          // the table's defaults and aliases by field id
}

// compile compiles writer schema w against the table's type t at path.
func (c *compiler) compile(w hamba.Schema, t iceberg.Type, path string) (*node, error) {
	if r, ok := w.(*hamba.RefSchema); ok {
		w = r.Schema()
	}
	switch w := w.(type) {
	case *hamba.UnionSchema:
		return c.compileUnion(w, t, path)
	case *hamba.RecordSchema:
		if c.open[w.FullName()] {
			// Convert's string column of a recursive record.
			if !t.Equals(iceberg.PrimitiveTypes.String) {
				return nil, mismatch(path, "record "+w.FullName()+" (recursive: JSON text)", t)
			}
			return &node{op: opJSON, app: aString, path: path, schema: w, minSize: minSize(w, map[string]bool{})}, nil
		}
		st, ok := t.(*iceberg.StructType)
		if !ok {
			return nil, mismatch(path, "record "+w.FullName(), t)
		}
		c.open[w.FullName()] = true
		defer delete(c.open, w.FullName())
		fields := make([]field, len(w.Fields()))
		for i, f := range w.Fields() {
			fields[i] = field{f.Name(), f.Type()}
		}
		return c.compileRecord(fields, st, path)
	case *hamba.ArraySchema:
		lt, ok := t.(*iceberg.ListType)
		if !ok {
			return nil, mismatch(path, "array", t)
		}
		p := path + ".element"
		if nullable(w.Items()) && lt.ElementRequired {
			return nil, fmt.Errorf("field %s: writer optional, table required", p)
		}
		e, err := c.compile(w.Items(), lt.Element, p)
		if err != nil {
			return nil, err
		}
		return &node{op: opArray, app: aList, path: path, elem: e, minSize: 1}, nil
	case *hamba.MapSchema:
		mt, ok := t.(*iceberg.MapType)
		if !ok || !mt.KeyType.Equals(iceberg.PrimitiveTypes.String) {
			return nil, mismatch(path, "map", t)
		}
		p := path + ".value"
		if nullable(w.Values()) && mt.ValueRequired {
			return nil, fmt.Errorf("field %s: writer optional, table required", p)
		}
		e, err := c.compile(w.Values(), mt.ValueType, p)
		if err != nil {
			return nil, err
		}
		return &node{op: opMap, app: aMap, path: path, elem: e, minSize: 1}, nil
	case *hamba.NullSchema:
		return nil, fmt.Errorf("field %s: type null outside a union with another type: %w", path, ErrUnsupported)
	}
	return compileLeaf(w, t, path)
}

type field struct {
	name string
	typ  hamba.Schema
}

// compileRecord matches writer fields to the table's fields by name, or
// by one of a table field's aliases (Avro spec 1.12, "Aliases"); a table
// field the writer lacks takes its default, or null.
func (c *compiler) compileRecord(fields []field, st *iceberg.StructType, path string) (*node, error) {
	n := &node{op: opRecord, app: aStruct, path: path, ntable: len(st.FieldList)}
	n.table = make([]*node, len(st.FieldList))
	byName := make(map[string]int, len(st.FieldList))
	for j, f := range st.FieldList {
		byName[f.Name] = j
	}
	for j, f := range st.FieldList {
		for _, a := range c.fields[f.ID].Aliases {
			if _, ok := byName[a]; !ok {
				byName[a] = j
			}
		}
	}
	n.direct = len(fields) == len(st.FieldList)
	for i, f := range fields {
		p := join(path, f.name)
		j, ok := byName[f.name]
		if !ok || n.table[j] != nil {
			return nil, fmt.Errorf("field %s: written, but the table has no such field", p)
		}
		tf := st.FieldList[j]
		if nullable(f.typ) && tf.Required {
			return nil, fmt.Errorf("field %s: writer optional, table required", p)
		}
		cn, err := c.compile(f.typ, tf.Type, join(path, tf.Name))
		if err != nil {
			return nil, err
		}
		cn.slot = j
		n.fields = append(n.fields, cn)
		n.table[j] = cn
		n.minSize += cn.minSize
		if j != i {
			n.direct = false
		}
	}
	for j, tf := range st.FieldList {
		if n.table[j] != nil {
			continue
		}
		if f := c.fields[tf.ID]; f.Default != nil {
			d, err := f.constant(tf.Type, join(path, tf.Name))
			if err != nil {
				return nil, err
			}
			if n.defaults == nil {
				n.defaults = make([]*Decoder, len(st.FieldList))
			}
			n.defaults[j] = d
			continue
		}
		if tf.Required {
			return nil, fmt.Errorf("field %s: required by the table, not written", join(path, tf.Name))
		}
	}
	return n, nil
}

func (c *compiler) compileUnion(w *hamba.UnionSchema, t iceberg.Type, path string) (*node, error) {
	branches, _ := nonNull(w)
	n := &node{op: opUnion, path: path, minSize: 1, branches: make([]*node, len(w.Types())), tags: make([]int, len(w.Types()))}
	if len(branches) == 0 {
		return nil, fmt.Errorf("field %s: a union of null alone: %w", path, ErrUnsupported)
	}
	if len(branches) == 1 {
		for i, b := range w.Types() {
			if b.Type() == hamba.Null {
				continue
			}
			cn, err := c.compile(b, t, path)
			if err != nil {
				return nil, err
			}
			n.branches[i], n.app = cn, cn.app
		}
		return n, nil
	}
	st, ok := t.(*iceberg.StructType)
	if !ok {
		return nil, mismatch(path, "union of "+fmt.Sprint(len(branches))+" types", t)
	}
	n.app, n.tableFields, n.tagPos = aUnion, len(st.FieldList), -1
	byName := make(map[string]int, len(st.FieldList))
	for j, f := range st.FieldList {
		byName[f.Name] = j
	}
	if j, ok := byName[unionTag]; ok && st.FieldList[j].Type.Equals(iceberg.PrimitiveTypes.Int32) {
		n.tagPos = j
	} else {
		return nil, fmt.Errorf("field %s: the table's struct for a union has no int field %q", path, unionTag)
	}
	k := 0
	for i, b := range w.Types() {
		if b.Type() == hamba.Null {
			continue
		}
		name := unionField(k)
		j, ok := byName[name]
		if !ok {
			return nil, fmt.Errorf("field %s: written, but the table has no such field", join(path, name))
		}
		if st.FieldList[j].Required {
			return nil, fmt.Errorf("field %s: a union branch must be optional in the table", join(path, name))
		}
		cn, err := c.compile(b, st.FieldList[j].Type, join(path, name))
		if err != nil {
			return nil, err
		}
		n.branches[i], n.tags[i] = cn, k
		n.tagField = append(n.tagField, j)
		k++
	}
	for j, f := range st.FieldList {
		if f.Required && j != n.tagPos {
			return nil, fmt.Errorf("field %s: required by the table, not written", join(path, f.Name))
		}
	}
	return n, nil
}

// compileLeaf compiles a primitive, enum or fixed: its mapped type (as
// Convert gives it) must equal the table's, or widen to it by an Iceberg
// promotion (int→long, float→double, decimal(P,S)→decimal(P',S), P' ≥ P).
func compileLeaf(w hamba.Schema, t iceberg.Type, path string) (*node, error) {
	m, err := leafType(w, path)
	if err != nil {
		return nil, err
	}
	n := &node{path: path, minSize: 1}
	switch w := w.(type) {
	case *hamba.EnumSchema:
		n.op = opEnum
		for _, s := range w.Symbols() {
			n.symbols = append(n.symbols, []byte(s))
		}
	case *hamba.FixedSchema:
		n.size, n.minSize = w.Size(), w.Size()
		switch m.(type) {
		case iceberg.DecimalType:
			n.op = opDecimalFixed
		case iceberg.UUIDType:
			n.op = opUUIDFixed
		default:
			n.op = opFixed
		}
	case *hamba.PrimitiveSchema:
		var lt hamba.LogicalType
		if l := w.Logical(); l != nil {
			lt = l.Type()
		}
		switch w.Type() {
		case hamba.Boolean:
			n.op = opBool
		case hamba.Int:
			n.op = map[hamba.LogicalType]op{hamba.Date: opDate, hamba.TimeMillis: opTimeMillis}[lt]
			if n.op == 0 {
				n.op = opInt
			}
		case hamba.Long:
			switch {
			case lt == hamba.TimeMicros:
				n.op = opTimeMicros
			case lt == hamba.TimestampMillis || lt == hamba.LocalTimestampMillis:
				n.op = opTsMillis
			case lt == "" && (logicalProp(w) == timestampNanos || logicalProp(w) == localTimestampNanos):
				n.op = opTsNanos
			default:
				n.op = opLong
			}
		case hamba.Float:
			n.op, n.minSize = opFloat, 4
		case hamba.Double:
			n.op, n.minSize = opDouble, 8
		case hamba.String:
			n.op = opString
			if lt == hamba.UUID {
				n.op = opUUIDString
			}
		case hamba.Bytes:
			n.op = opBytes
			if _, ok := m.(iceberg.DecimalType); ok {
				n.op = opDecimalBytes
			}
		}
	}
	if d, ok := m.(iceberg.DecimalType); ok {
		n.prec = int32(d.Precision())
	}
	switch {
	case m.Equals(t):
	case m.Equals(iceberg.PrimitiveTypes.Int32) && t.Equals(iceberg.PrimitiveTypes.Int64):
		n.op = opIntLong
	case m.Equals(iceberg.PrimitiveTypes.Float32) && t.Equals(iceberg.PrimitiveTypes.Float64):
		n.op = opFloatDouble
	default:
		md, ok1 := m.(iceberg.DecimalType)
		td, ok2 := t.(iceberg.DecimalType)
		if !ok1 || !ok2 || md.Scale() != td.Scale() || td.Precision() < md.Precision() {
			return nil, mismatch(path, writerName(w, m), t)
		}
	}
	n.app = appOf(t)
	return n, nil
}

func appOf(t iceberg.Type) app {
	switch t.(type) {
	case iceberg.BooleanType:
		return aBool
	case iceberg.Int32Type:
		return aInt32
	case iceberg.Int64Type:
		return aInt64
	case iceberg.Float32Type:
		return aFloat32
	case iceberg.Float64Type:
		return aFloat64
	case iceberg.DateType:
		return aDate
	case iceberg.TimeType:
		return aTime
	case iceberg.TimestampType, iceberg.TimestampTzType:
		return aTimestamp
	case iceberg.StringType:
		return aString
	case iceberg.BinaryType:
		return aBinary
	case iceberg.FixedType:
		return aFixed
	case iceberg.UUIDType:
		return aUUID
	case iceberg.DecimalType:
		return aDecimal
	}
	return 0
}

// writerName names a writer leaf in errors: its Avro type, with the
// logical type when it has one.
func writerName(w hamba.Schema, m iceberg.Type) string {
	s := string(w.Type())
	if lt := logicalName(w); lt != "" {
		s += " (" + lt + ")"
	}
	if s == string(hamba.Enum) || s == string(hamba.Fixed) {
		s += " (" + m.String() + ")"
	}
	return s
}

func logicalName(w hamba.Schema) string {
	if l, ok := w.(hamba.LogicalTypeSchema); ok && l.Logical() != nil {
		return string(l.Logical().Type())
	}
	if p, ok := w.(interface{ Prop(string) any }); ok {
		return logicalProp(p)
	}
	return ""
}

func mismatch(path, writer string, t iceberg.Type) error {
	return fmt.Errorf("field %s: writer %s, table %s", path, writer, t)
}

// nullable reports whether w is a union with a null branch.
func nullable(w hamba.Schema) bool {
	u, ok := w.(*hamba.UnionSchema)
	if !ok {
		return false
	}
	_, hasNull := nonNull(u)
	return hasNull
}
