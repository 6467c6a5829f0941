package codec

import (
	"fmt"
	"strings"

	"github.com/apache/iceberg-go"

	"github.com/minkhq/mink/codec/jsonschema"
)

// kind is the column type a JSON value is converted to.
type kind uint8

const (
	kBool kind = iota + 1
	kInt32
	kInt64
	kFloat32
	kFloat64
	kDate
	kTime
	kTimestamp
	kTimestampTz
	kString
	kBinary
	kFixed
	kUUID
	kDecimal
	kStruct
	kList
	kMap
)

var kindNames = [...]string{
	kBool: "boolean", kInt32: "int", kInt64: "long", kFloat32: "float",
	kFloat64: "double", kDate: "date", kTime: "time", kTimestamp: "timestamp",
	kTimestampTz: "timestamptz", kString: "string", kBinary: "binary",
	kFixed: "fixed", kUUID: "uuid", kDecimal: "decimal", kStruct: "struct",
	kList: "list", kMap: "map",
}

// node is one column (or nested field) of the decode plan compiled from the
// table schema.
type node struct {
	kind     kind
	name     string
	required bool
	typ      iceberg.Type

	size         int // fixed length in bytes
	prec, scale  int // decimal
	fields       []*node
	index        map[string]int // struct: field name (folded when fold) → position in fields
	fold         bool           // struct: keys match names case-insensitively (foldName)
	path         string         // struct: its path from the top ("" at the top, "a.element.b")
	elem         *node          // list element, map value
	elemRequired bool
	union        *unionPlan // struct: the struct of a JSON Schema union's branches
}

// unionPlan decodes a JSON Schema anyOf/oneOf into the struct of its
// branches: field[i] is the struct's field of u.Branches[i].
type unionPlan struct {
	u     *jsonschema.Union
	field []int
}

// attachUnions marks the structs of root (compiled from the table's
// columns) that hold the unions of a writer schema. A union whose path or
// branch the table lacks is an error: the writer's records are dead
// letters, never decoded as something else.
func attachUnions(root *node, unions []jsonschema.Union) error {
	for i := range unions {
		u := &unions[i]
		n := root
		for _, seg := range u.Path {
			switch n.kind {
			case kStruct:
				j := fieldIndex(n, seg)
				if j < 0 {
					return fmt.Errorf("the table has no field %s for the writer's %s", strings.Join(u.Path, "."), u.Kind())
				}
				n = n.fields[j]
			case kList, kMap:
				n = n.elem
			default:
				return fmt.Errorf("the table's field %s is a %s, not the writer's %s", strings.Join(u.Path, "."), n.typeName(), u.Kind())
			}
		}
		if n.kind != kStruct {
			return fmt.Errorf("the table's field %s is a %s, not the struct of the writer's %s", strings.Join(u.Path, "."), n.typeName(), u.Kind())
		}
		plan := &unionPlan{u: u}
		for _, b := range u.Branches {
			j := fieldIndex(n, b.Name)
			if j < 0 {
				return fmt.Errorf("the table's field %s has no field %s for a branch of the writer's %s", strings.Join(u.Path, "."), b.Name, u.Kind())
			}
			plan.field = append(plan.field, j)
		}
		n.union = plan
	}
	return nil
}

// fieldIndex is the position of the field named name in struct n, or -1.
func fieldIndex(n *node, name string) int {
	for j, f := range n.fields {
		if f.name == name {
			return j
		}
	}
	return -1
}

func (n *node) typeName() string {
	if n.typ != nil {
		return n.typ.String()
	}
	return kindNames[n.kind]
}

// compileStruct compiles the fields of a struct at path. Two fields of one
// struct may not have the same name (Iceberg: names are unique within a
// struct), nor, with case-insensitive matching, names equal under case
// folding: a key would match either.
func compileStruct(fields []iceberg.NestedField, path string, opts JSONOptions) (*node, error) {
	n := &node{kind: kStruct, index: make(map[string]int, len(fields)), fold: opts.caseInsensitive(), path: path}
	for _, f := range fields {
		p := f.Name
		if path != "" {
			p = path + "." + f.Name
		}
		c, err := compileType(f.Type, p, opts)
		if err != nil {
			return nil, err
		}
		c.name, c.required = f.Name, f.Required
		key := f.Name
		if n.fold {
			key = string(foldName(nil, []byte(f.Name)))
		}
		if j, dup := n.index[key]; dup {
			if n.fold {
				return nil, fmt.Errorf("field %s: its name and %q differ only by case: with %s = %s a JSON key would match both",
					p, n.fields[j].name, PropFieldMatching, MatchCaseInsensitive)
			}
			return nil, fmt.Errorf("field %s: the name appears twice in one struct", p)
		}
		n.index[key] = len(n.fields)
		n.fields = append(n.fields, c)
	}
	return n, nil
}

func compileType(t iceberg.Type, path string, opts JSONOptions) (*node, error) {
	n := &node{typ: t}
	switch t := t.(type) {
	case iceberg.BooleanType:
		n.kind = kBool
	case iceberg.Int32Type:
		n.kind = kInt32
	case iceberg.Int64Type:
		n.kind = kInt64
	case iceberg.Float32Type:
		n.kind = kFloat32
	case iceberg.Float64Type:
		n.kind = kFloat64
	case iceberg.DateType:
		n.kind = kDate
	case iceberg.TimeType:
		n.kind = kTime
	case iceberg.TimestampType:
		n.kind = kTimestamp
	case iceberg.TimestampTzType:
		n.kind = kTimestampTz
	case iceberg.StringType:
		n.kind = kString
	case iceberg.BinaryType:
		n.kind = kBinary
	case iceberg.UUIDType:
		n.kind = kUUID
	case iceberg.FixedType:
		n.kind, n.size = kFixed, t.Len()
	case iceberg.DecimalType:
		n.kind, n.prec, n.scale = kDecimal, t.Precision(), t.Scale()
		if n.prec < 1 || n.prec > 38 {
			return nil, fmt.Errorf("field %s: decimal precision %d: %w", path, n.prec, ErrUnsupported)
		}
	case *iceberg.StructType:
		s, err := compileStruct(t.FieldList, path, opts)
		if err != nil {
			return nil, err
		}
		s.typ = t
		return s, nil
	case *iceberg.ListType:
		e, err := compileType(t.Element, path+".element", opts)
		if err != nil {
			return nil, err
		}
		n.kind, n.elem, n.elemRequired = kList, e, t.ElementRequired
	case *iceberg.MapType:
		if _, ok := t.KeyType.(iceberg.StringType); !ok {
			return nil, fmt.Errorf("field %s: map key type %s: %w (JSON object keys are strings)", path, t.KeyType, ErrUnsupported)
		}
		v, err := compileType(t.ValueType, path+".value", opts)
		if err != nil {
			return nil, err
		}
		n.kind, n.elem, n.elemRequired = kMap, v, t.ValueRequired
	default:
		return nil, fmt.Errorf("field %s: type %s: %w by the json decoder", path, t, ErrUnsupported)
	}
	return n, nil
}
