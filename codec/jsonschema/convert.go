package jsonschema

import (
	"errors"
	"fmt"
	"math/big"
	"net/url"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"

	"github.com/minkhq/mink/codec/wire"
)

// ErrUnsupported is wrapped by the errors Convert returns for a schema, or
// a part of one, that has no exact Iceberg type (a union, a tuple, a
// recursive definition, a schema that accepts any value).
var ErrUnsupported = errors.New("unsupported JSON Schema")

// MaxDepth is the deepest nesting of types Convert accepts: a struct
// field, list element or map value is one level below its parent, the
// top-level properties are at level 1. Deeper is refused (ErrUnsupported)
// before the nested schema is read: each level's path is as long as the
// levels above it, and query engines choke on nested types far earlier.
const MaxDepth = 64

// hint ends the errors about fields whose values could be anything.
const hint = "declare the field, or use value format json with a schema file"

// Convert returns the Iceberg type of a JSON Schema document: a struct
// whose fields are the top-level properties, in the document's order. The
// mapping, row by row, is in docs/formats-json-schema.md:
//
//	object with properties             struct (required iff listed in
//	                                   "required" and null not allowed)
//	object with only additionalProperties V   map<string, V> (values always
//	                                   optional: iceberg-go v0.7.0 cannot
//	                                   scan required map values)
//	array with items                   list (element optional iff items
//	                                   allows null)
//	string                             string; format date-time →
//	                                   timestamptz, date → date, time →
//	                                   time, uuid → uuid; contentEncoding
//	                                   base64 → binary
//	integer, number, boolean           long, double, boolean
//	["null", T], anyOf/oneOf [null, T] optional T
//	anyOf/oneOf [A, B, ...]            struct with an optional field per
//	                                   branch (title, $ref name, else
//	                                   option_<n>); see Union
//	enum/const                         string (strings), long (integers),
//	                                   double (numbers), boolean
//
// Field ids are placeholders 1..n in depth-first pre-order (a field, then
// the fields nested in its type: list element, map key then value, struct
// fields); the caller reassigns them by path. Field docs are the
// properties' "description".
//
// $ref resolves to a JSON pointer or anchor in the same document, or to one
// of s.References (searched recursively) by name, which is the $ref URL as
// written or resolved against the referring document's $id.
//
// Errors name the field path ("field customer.id: ...", list elements as
// "items.element", map values as "tags.value"): invalid JSON, a $ref that
// does not resolve, and, wrapping ErrUnsupported, a top level that is not
// an object with properties, a recursive $ref (named), tuples
// (prefixItems, items as an array), type lists of two non-null types, allOf
// with more than one schema, {} / true schemas, objects without
// properties or an additionalProperties schema, type null alone, types
// nested deeper than MaxDepth. A document nested deeper than 1000 levels
// is invalid JSON here.
func Convert(s *wire.Schema) (iceberg.Type, error) {
	if s == nil {
		return nil, errors.New("no schema")
	}
	if s.Type != "" && s.Type != wire.TypeJSON {
		return nil, fmt.Errorf("schema %d has type %s, not %s", s.ID, s.Type, wire.TypeJSON)
	}
	st, _, err := convert(s)
	if err != nil {
		return nil, err
	}
	next := 1
	return renumber(st, &next), nil
}

// convert is Convert with ids 0, and the converter that walked s.
func convert(s *wire.Schema) (*iceberg.StructType, *converter, error) {
	c := &converter{byName: map[string]*doc{}}
	root, err := c.load("", s.Text)
	if err != nil {
		return nil, nil, fmt.Errorf("schema %d: %w", s.ID, err)
	}
	c.root = root
	if err := c.loadRefs(s.References); err != nil {
		return nil, nil, err
	}
	t, _, err := c.convert(root, root.root, "")
	if err != nil {
		return nil, nil, err
	}
	st, ok := t.(*iceberg.StructType)
	if !ok {
		return nil, nil, unsupported("", "the value is a %s; a table's value must be an object with properties", t)
	}
	return st, c, nil
}

// doc is one parsed schema document: the registry schema or a reference.
type doc struct {
	name string   // the reference name; "" for the schema itself
	base *url.URL // its $id, if any, against which relative $refs resolve
	root *node
}

type converter struct {
	root   *doc            // the registry schema
	byName map[string]*doc // by reference name, and by absolute $id
	stack  []*node         // the $ref targets being expanded, to tell recursion
	depth  int             // types nested above the one being converted
	segs   []string        // the field path of the type being converted
	unions []Union         // the unions met, in pre-order
}

// nested converts n, the type of a field, list element or map value at
// path (whose last segment is seg), one level below the type being
// converted.
func (c *converter) nested(d *doc, n *node, path, seg string) (iceberg.Type, bool, error) {
	if c.depth == MaxDepth {
		return nil, false, unsupported(path, "types nested deeper than %d levels", MaxDepth)
	}
	c.depth++
	c.segs = append(c.segs, seg)
	defer func() { c.depth--; c.segs = c.segs[:len(c.segs)-1] }()
	return c.convert(d, n, path)
}

func (c *converter) load(name, text string) (*doc, error) {
	n, err := parse(text)
	if err != nil {
		return nil, err
	}
	d := &doc{name: name, root: n}
	id := n.get("$id")
	if id == nil {
		id = n.get("id") // draft 04
	}
	if id != nil && id.kind == kString {
		if u, err := url.Parse(id.str); err == nil {
			d.base = u
			if u.IsAbs() {
				u2 := *u
				u2.Fragment = ""
				if _, seen := c.byName[u2.String()]; !seen {
					c.byName[u2.String()] = d
				}
			}
		}
	}
	if name != "" {
		c.byName[name] = d
	}
	return d, nil
}

func (c *converter) loadRefs(refs []wire.Reference) error {
	for _, r := range refs {
		if _, seen := c.byName[r.Name]; seen {
			continue
		}
		if _, err := c.load(r.Name, r.Schema.Text); err != nil {
			return fmt.Errorf("reference %q (subject %s version %d): %w", r.Name, r.Subject, r.Version, err)
		}
		if err := c.loadRefs(r.Schema.References); err != nil {
			return err
		}
	}
	return nil
}

func fieldErr(path string, err error) error {
	if path == "" {
		return fmt.Errorf("top level: %w", err)
	}
	return fmt.Errorf("field %s: %w", path, err)
}

func unsupported(path, format string, args ...any) error {
	return fieldErr(path, fmt.Errorf("%w: %s", ErrUnsupported, fmt.Sprintf(format, args...)))
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// shaping are the keywords that decide a value's type. Next to $ref,
// anyOf, oneOf or allOf they would have to be merged with another schema,
// which Convert does not do; every other keyword (title, description,
// minimum, pattern, ...) constrains values without changing their type.
var shaping = []string{"type", "properties", "additionalProperties", "patternProperties",
	"items", "prefixItems", "enum", "const", "format", "contentEncoding",
	"$ref", "anyOf", "oneOf", "allOf", "$dynamicRef", "$recursiveRef"}

// alone checks that n has no shaping keyword but except.
func alone(n *node, except, path string) error {
	for _, k := range shaping {
		if k != except && n.get(k) != nil {
			return unsupported(path, "%s next to %s: merging two schemas is not supported", k, except)
		}
	}
	return nil
}

// convert returns the Iceberg type of schema n of document d (ids 0), and
// whether the schema allows null.
func (c *converter) convert(d *doc, n *node, path string) (iceberg.Type, bool, error) {
	switch n.kind {
	case kBool:
		if n.b {
			return nil, false, unsupported(path, "the schema true accepts any JSON value, which has no Iceberg type (%s)", hint)
		}
		return nil, false, unsupported(path, "the schema false accepts no value")
	case kObject:
	default:
		return nil, false, fieldErr(path, fmt.Errorf("a schema must be an object or a boolean, not a %s", n.kind))
	}
	for _, k := range []string{"$dynamicRef", "$recursiveRef"} {
		if n.get(k) != nil {
			return nil, false, unsupported(path, "%s", k)
		}
	}
	if ref := n.get("$ref"); ref != nil {
		if err := alone(n, "$ref", path); err != nil {
			return nil, false, err
		}
		if ref.kind != kString {
			return nil, false, fieldErr(path, errors.New("$ref is not a string"))
		}
		return c.ref(d, ref.str, path)
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if branches := n.get(k); branches != nil {
			if err := alone(n, k, path); err != nil {
				return nil, false, err
			}
			return c.union(d, k, branches, path)
		}
	}
	if all := n.get("allOf"); all != nil {
		if err := alone(n, "allOf", path); err != nil {
			return nil, false, err
		}
		if all.kind != kArray || len(all.elems) != 1 {
			return nil, false, unsupported(path, "allOf with %d schemas: merging schemas is not supported; %s", len(all.elems), hint)
		}
		return c.convert(d, all.elems[0], path)
	}

	if n.get("prefixItems") != nil {
		return nil, false, unsupported(path, "prefixItems: a tuple has no Iceberg type (use items for a list)")
	}
	var types []string
	typ := n.get("type")
	switch {
	case typ == nil:
	case typ.kind == kString:
		types = []string{typ.str}
	case typ.kind == kArray:
		for _, e := range typ.elems {
			if e.kind != kString {
				return nil, false, fieldErr(path, errors.New("type: not a string or an array of strings"))
			}
			types = append(types, e.str)
		}
	default:
		return nil, false, fieldErr(path, errors.New("type: not a string or an array of strings"))
	}
	nullable := false
	var nonNull []string
	for _, t := range types {
		if t == "null" {
			nullable = true
		} else {
			nonNull = append(nonNull, t)
		}
	}
	switch {
	case len(nonNull) > 1:
		return nil, false, unsupported(path, "type %q: a union of types has no Iceberg type; %s", nonNull, hint)
	case len(nonNull) == 0 && typ != nil && len(types) > 0:
		return nil, false, unsupported(path, "type null alone: no Iceberg type holds only null")
	}
	var name string
	if len(nonNull) == 1 {
		name = nonNull[0]
	} else {
		// No type: the keywords tell it, or else any value is valid.
		switch {
		case n.get("enum") != nil || n.get("const") != nil:
			t, null, err := enumType(n, path)
			return t, null || nullable, err
		case n.get("properties") != nil || n.get("additionalProperties") != nil:
			name = "object"
		case n.get("items") != nil:
			name = "array"
		default:
			return nil, false, unsupported(path, "the schema {} accepts any JSON value, which has no Iceberg type (%s)", hint)
		}
	}
	t, err := c.typed(d, n, name, path)
	return t, nullable, err
}

// typed converts schema n whose type is name.
func (c *converter) typed(d *doc, n *node, name, path string) (iceberg.Type, error) {
	switch name {
	case "string":
		if enc := n.get("contentEncoding"); enc != nil && enc.kind == kString && strings.EqualFold(enc.str, "base64") {
			return iceberg.PrimitiveTypes.Binary, nil
		}
		if f := n.get("format"); f != nil && f.kind == kString {
			switch f.str {
			case "date-time":
				return iceberg.PrimitiveTypes.TimestampTz, nil
			case "date":
				return iceberg.PrimitiveTypes.Date, nil
			case "time":
				return iceberg.PrimitiveTypes.Time, nil
			case "uuid":
				return iceberg.PrimitiveTypes.UUID, nil
			}
		}
		return iceberg.PrimitiveTypes.String, nil
	case "integer":
		return iceberg.PrimitiveTypes.Int64, nil
	case "number":
		return iceberg.PrimitiveTypes.Float64, nil
	case "boolean":
		return iceberg.PrimitiveTypes.Bool, nil
	case "object":
		return c.object(d, n, path)
	case "array":
		items := n.get("items")
		switch {
		case items == nil:
			return nil, unsupported(path, "array without items: its elements could be anything; %s", hint)
		case items.kind == kArray:
			return nil, unsupported(path, "items is an array: a tuple has no Iceberg type (use one schema for items)")
		}
		elem, null, err := c.nested(d, items, join(path, "element"), "element")
		if err != nil {
			return nil, err
		}
		return &iceberg.ListType{Element: elem, ElementRequired: !null}, nil
	default:
		return nil, fieldErr(path, fmt.Errorf("unknown type %q", name))
	}
}

func (c *converter) object(d *doc, n *node, path string) (iceberg.Type, error) {
	props := n.get("properties")
	if props != nil && props.kind != kObject {
		return nil, fieldErr(path, errors.New("properties is not an object"))
	}
	if props == nil || len(props.keys) == 0 {
		addl := n.get("additionalProperties")
		if addl == nil || (addl.kind == kBool && !addl.b) {
			return nil, unsupported(path, "object without properties: it has no fields; %s", hint)
		}
		val, _, err := c.nested(d, addl, join(path, "value"), "value")
		if err != nil {
			return nil, err
		}
		// Values optional even when null is not allowed: iceberg-go v0.7.0
		// cannot scan required map values (see codec.TableSchema). A null
		// value a record carries anyway is stored as the null it is.
		return &iceberg.MapType{KeyType: iceberg.PrimitiveTypes.String, ValueType: val, ValueRequired: false}, nil
	}
	required := map[string]bool{}
	if r := n.get("required"); r != nil && r.kind == kArray {
		for _, e := range r.elems {
			if e.kind == kString {
				required[e.str] = true
			}
		}
	}
	fields := make([]iceberg.NestedField, 0, len(props.keys))
	for i, name := range props.keys {
		ps := props.vals[i]
		t, null, err := c.nested(d, ps, join(path, name), name)
		if err != nil {
			return nil, err
		}
		f := iceberg.NestedField{Name: name, Type: t, Required: required[name] && !null}
		if desc := ps.get("description"); desc != nil && desc.kind == kString {
			f.Doc = desc.str
		}
		fields = append(fields, f)
	}
	return &iceberg.StructType{FieldList: fields}, nil
}

// union converts anyOf or oneOf: [null, T] in either order is optional
// T; two or more schemas other than null are a struct with one optional
// field per branch (named by branchNames), recorded in c.unions for the
// decoder, which fills the fields of the branches a value validates
// against (JSON Schema 2020-12 Core §10.2.1.2, §10.2.1.3).
func (c *converter) union(d *doc, k string, branches *node, path string) (iceberg.Type, bool, error) {
	if branches.kind != kArray {
		return nil, false, fieldErr(path, fmt.Errorf("%s is not an array", k))
	}
	var others []*node
	null := false
	for _, b := range branches.elems {
		if isNull(b) {
			null = true
		} else {
			others = append(others, b)
		}
	}
	switch len(others) {
	case 0:
		return nil, false, unsupported(path, "%s with no schema other than null: no Iceberg type holds only null", k)
	case 1:
		t, n, err := c.convert(d, others[0], path)
		return t, n || null, err
	}
	names, err := branchNames(branches.elems, path)
	if err != nil {
		return nil, false, err
	}
	u := Union{Path: append([]string(nil), c.segs...), OneOf: k == "oneOf"}
	fields := make([]iceberg.NestedField, 0, len(others))
	for i, b := range branches.elems {
		if isNull(b) {
			continue
		}
		// Each branch's field is optional: a value fills only the
		// branches it validates against.
		t, _, err := c.nested(d, b, join(path, names[i]), names[i])
		if err != nil {
			return nil, false, err
		}
		f := iceberg.NestedField{Name: names[i], Type: t}
		if desc := b.get("description"); desc != nil && desc.kind == kString {
			f.Doc = desc.str
		}
		fields = append(fields, f)
		u.Branches = append(u.Branches, Branch{Name: names[i], doc: d, node: b})
	}
	c.unions = append(c.unions, u)
	return &iceberg.StructType{FieldList: fields}, null, nil
}

// branchNames names the branches of a union: by "title", else by the
// last segment of "$ref" ("#/$defs/car" and "car.json" are car), else
// option_<i> (i the branch's index in the array); a name already taken
// by an earlier branch is option_<i> too.
func branchNames(branches []*node, path string) ([]string, error) {
	names := make([]string, len(branches))
	taken := map[string]bool{}
	for i, b := range branches {
		if isNull(b) {
			continue
		}
		name := ""
		if t := b.get("title"); t != nil && t.kind == kString {
			name = t.str
		} else if r := b.get("$ref"); r != nil && r.kind == kString {
			name = refName(r.str)
		}
		if name == "" || taken[name] || strings.ContainsRune(name, 0) {
			name = "option_" + strconv.Itoa(i)
		}
		if taken[name] {
			return nil, unsupported(path, "two branches are named %s: give them titles", name)
		}
		taken[name] = true
		names[i] = name
	}
	return names, nil
}

// refName is the last segment of a $ref, without a .json suffix.
func refName(ref string) string {
	if i := strings.LastIndexAny(ref, "/#"); i >= 0 {
		ref = ref[i+1:]
	}
	return strings.TrimSuffix(ref, ".json")
}

// isNull reports whether schema n accepts only null: {"type": "null"},
// {"const": null} or {"enum": [null]}.
func isNull(n *node) bool {
	if t := n.get("type"); t != nil && t.kind == kString && t.str == "null" {
		return true
	}
	if v := n.get("const"); v != nil && v.kind == kNull && n.get("type") == nil {
		return true
	}
	if e := n.get("enum"); e != nil && e.kind == kArray && len(e.elems) == 1 && e.elems[0].kind == kNull && n.get("type") == nil {
		return true
	}
	return false
}

// enumType types an enum or const without a type from its values.
func enumType(n *node, path string) (iceberg.Type, bool, error) {
	var vals []*node
	if e := n.get("enum"); e != nil {
		if e.kind != kArray {
			return nil, false, fieldErr(path, errors.New("enum is not an array"))
		}
		vals = e.elems
	} else {
		vals = []*node{n.get("const")}
	}
	null := false
	kinds := map[string]bool{}
	for _, v := range vals {
		switch v.kind {
		case kNull:
			null = true
		case kString:
			kinds["string"] = true
		case kBool:
			kinds["boolean"] = true
		case kNumber:
			if _, err := strconv.ParseInt(v.str, 10, 64); err == nil {
				kinds["integer"] = true
			} else if exactDouble(v.str) {
				kinds["number"] = true
			} else {
				return nil, false, unsupported(path, "enum value %s is not exact as a double", v.str)
			}
		default:
			return nil, false, unsupported(path, "enum value of type %s: only strings, numbers and booleans", v.kind)
		}
	}
	switch {
	case len(kinds) == 1 && kinds["string"]:
		return iceberg.PrimitiveTypes.String, null, nil
	case len(kinds) == 1 && kinds["boolean"]:
		return iceberg.PrimitiveTypes.Bool, null, nil
	case len(kinds) == 1 && kinds["integer"]:
		return iceberg.PrimitiveTypes.Int64, null, nil
	case len(kinds) == 1 && kinds["number"]:
		return iceberg.PrimitiveTypes.Float64, null, nil
	case len(kinds) == 2 && kinds["number"] && kinds["integer"]:
		for _, v := range vals {
			if v.kind == kNumber && !exactDouble(v.str) {
				return nil, false, unsupported(path, "enum value %s is not exact as a double", v.str)
			}
		}
		return iceberg.PrimitiveTypes.Float64, null, nil
	case len(kinds) == 0:
		return nil, false, unsupported(path, "enum of null alone: no Iceberg type holds only null")
	}
	return nil, false, unsupported(path, "enum mixes strings, numbers and booleans: add a type; %s", hint)
}

// exactDouble reports whether the JSON number lit converts to a double as
// codec's decoder would: finite, not rounded to zero, and an integer
// literal exactly.
func exactDouble(lit string) bool {
	v, err := strconv.ParseFloat(lit, 64)
	if err != nil {
		return false // out of range
	}
	if mant, _, _ := strings.Cut(strings.ToLower(lit), "e"); v == 0 && strings.ContainsAny(mant, "123456789") {
		return false // rounds to zero
	}
	if strings.ContainsAny(lit, ".eE") {
		return true
	}
	want, _ := new(big.Int).SetString(lit, 10)
	got, _ := new(big.Float).SetFloat64(v).Int(nil)
	return want.Cmp(got) == 0
}

// ref converts the schema $ref points at.
func (c *converter) ref(d *doc, ref, path string) (iceberg.Type, bool, error) {
	td, target, err := c.resolve(d, ref)
	if err != nil {
		return nil, false, fieldErr(path, fmt.Errorf("$ref %q: %w", ref, err))
	}
	// By node, not by spelling: "#/$defs/a", "#a" and "other.json#/$defs/a"
	// may all be one schema, and any endless expansion revisits a node.
	for _, k := range c.stack {
		if k == target {
			return nil, false, unsupported(path, "$ref %q is recursive: an Iceberg type cannot nest without end", ref)
		}
	}
	c.stack = append(c.stack, target)
	defer func() { c.stack = c.stack[:len(c.stack)-1] }()
	return c.convert(td, target, path)
}

// resolve finds the document and the schema ref names.
func (c *converter) resolve(d *doc, ref string) (*doc, *node, error) {
	base, frag, _ := strings.Cut(ref, "#")
	td := d
	if base != "" {
		td = c.byName[ref]
		if td == nil {
			td = c.byName[base]
		}
		if td == nil && d.base != nil {
			if u, err := d.base.Parse(base); err == nil {
				td = c.byName[u.String()]
			}
		}
		if td == nil {
			return nil, nil, errors.New("no such schema reference (the registry schema's references name none)")
		}
	}
	if frag == "" {
		return td, td.root, nil
	}
	if !strings.HasPrefix(frag, "/") {
		if n := anchor(td.root, frag); n != nil {
			return td, n, nil
		}
		return nil, nil, fmt.Errorf("no anchor %q", frag)
	}
	n := td.root
	for _, tok := range strings.Split(frag[1:], "/") {
		if t, err := url.PathUnescape(tok); err == nil {
			tok = t
		}
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch n.kind {
		case kObject:
			n = n.get(tok)
		case kArray:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(n.elems) {
				n = nil
			} else {
				n = n.elems[i]
			}
		default:
			n = nil
		}
		if n == nil {
			return nil, nil, fmt.Errorf("no %q in the document", "#"+frag)
		}
	}
	return td, n, nil
}

// anchor finds the schema named name by "$anchor" (2019-09 on) or by
// "$id": "#name" (draft 07 and before).
func anchor(n *node, name string) *node {
	switch n.kind {
	case kObject:
		if a := n.get("$anchor"); a != nil && a.kind == kString && a.str == name {
			return n
		}
		if a := n.get("$id"); a != nil && a.kind == kString && a.str == "#"+name {
			return n
		}
		for _, v := range n.vals {
			if m := anchor(v, name); m != nil {
				return m
			}
		}
	case kArray:
		for _, v := range n.elems {
			if m := anchor(v, name); m != nil {
				return m
			}
		}
	}
	return nil
}

// renumber copies t with placeholder field ids from *next on, in
// depth-first pre-order.
func renumber(t iceberg.Type, next *int) iceberg.Type {
	switch t := t.(type) {
	case *iceberg.StructType:
		fields := make([]iceberg.NestedField, len(t.FieldList))
		for i, f := range t.FieldList {
			f.ID = *next
			*next++
			f.Type = renumber(f.Type, next)
			fields[i] = f
		}
		return &iceberg.StructType{FieldList: fields}
	case *iceberg.ListType:
		l := *t
		l.ElementID = *next
		*next++
		l.Element = renumber(l.Element, next)
		return &l
	case *iceberg.MapType:
		m := *t
		m.KeyID = *next
		m.ValueID = *next + 1
		*next += 2
		m.ValueType = renumber(m.ValueType, next)
		return &m
	default:
		return t
	}
}
