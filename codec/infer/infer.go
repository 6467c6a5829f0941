// Package infer infers the Iceberg type of JSON record values, for value
// format json with --infer (docs/formats-json-schema.md, "Inference").
//
// An Inferrer merges the values it is given into one shape per field path
// and types each path so that every value seen converts to it exactly with
// codec's JSON decoder: a long only when every number was an integer, a
// double only when every number converts to one exactly, else the numbers'
// JSON text in a string column. Strings stay strings: a string is never
// guessed to be a timestamp, a date or a uuid, because a guess that one
// later record does not fit would send that record to the dead-letter
// table.
package infer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"sort"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
)

// MaxDepth is the deepest nesting of objects and arrays Add accepts: a
// value nested deeper is refused before its paths are built (each level's
// path is as long as the levels above it, so a 100,000-level document
// would otherwise cost gigabytes). 64 levels is far more than a column
// needs; query engines choke on nested types much earlier. codec's JSON
// decoder has its own, larger, bound (1000), so such records are dead
// letters when indexed.
const MaxDepth = 64

// ErrTooDeep is wrapped by the Add error for a value nested deeper than
// MaxDepth.
var ErrTooDeep = errors.New("JSON nested too deep to infer")

// ErrConflict is wrapped by the Struct error for a path that held an
// object or an array in some records and another kind in others.
var ErrConflict = errors.New("conflicting JSON types")

// Inferrer merges JSON object values into one Iceberg struct type. The zero
// value is ready to use. It keeps one shape per field path, not the
// values: its memory grows with the number of distinct paths.
type Inferrer struct {
	records int // calls of Add: the record numbers in errors
	root    *shape
}

// shape is what the values seen at one path were.
type shape struct {
	// The record number (1-based call of Add) where each kind was first
	// seen, 0 if never.
	null, boolean, integer, number, str, object, array int
	// notDouble: some number seen does not convert exactly to a double.
	notDouble bool
	keys      []string // object keys, first seen first
	fields    map[string]*shape
	elem      *shape // array elements; nil while every array was empty
}

// Add merges one record value into the inferred type. Errors: the value is
// not valid JSON, has a key twice in one object, nests objects and arrays
// deeper than MaxDepth (ErrTooDeep), or is not an object (such
// records are dead letters: the caller skips them). A failed Add changes
// nothing but the record count.
func (i *Inferrer) Add(value []byte) error {
	i.records++
	v, err := parse(value)
	if err != nil {
		return err
	}
	if v.kind != kObject {
		return fmt.Errorf("value is %s, not a JSON object", article(v.kind))
	}
	if i.root == nil {
		i.root = &shape{}
	}
	i.root.merge(v, i.records)
	return nil
}

func (s *shape) merge(v *val, rec int) {
	first := func(at *int) {
		if *at == 0 {
			*at = rec
		}
	}
	switch v.kind {
	case kNull:
		first(&s.null)
	case kBool:
		first(&s.boolean)
	case kString:
		first(&s.str)
	case kNumber:
		if _, err := strconv.ParseInt(v.str, 10, 64); err == nil {
			first(&s.integer)
		} else {
			first(&s.number)
		}
		if !exactDouble(v.str) {
			s.notDouble = true
		}
	case kArray:
		first(&s.array)
		for _, e := range v.elems {
			if s.elem == nil {
				s.elem = &shape{}
			}
			s.elem.merge(e, rec)
		}
	case kObject:
		first(&s.object)
		if s.fields == nil {
			s.fields = map[string]*shape{}
		}
		for j, k := range v.keys {
			if k == "" || strings.ContainsRune(k, 0) {
				// No column can be named so: a field needs a name, and
				// PostgreSQL's jsonb, where schemas are kept, holds no
				// U+0000. The field stays unknown (counted by the
				// decoder).
				continue
			}
			f := s.fields[k]
			if f == nil {
				f = &shape{}
				s.fields[k] = f
				s.keys = append(s.keys, k)
			}
			f.merge(v.vals[j], rec)
		}
	}
}

// Struct returns the merged type of the values added: their keys as
// fields, first seen first, every field and list element optional, with
// placeholder ids 1..n in depth-first pre-order (the caller reassigns them
// by path). Types, by what a path held across all values (null aside):
//
//	strings                      string
//	true/false                   boolean
//	integers that fit a long     long
//	other numbers                double, if every number seen converts to a
//	                             double exactly (integers up to 2^53, and
//	                             larger ones a double holds); else string
//	strings, numbers, booleans   string (numbers and booleans keep their
//	mixed                        JSON text)
//	null only                    string
//	objects                      struct, merged by key
//	arrays                       list of the merged element type;
//	                             list<string> when every array was empty
//
// A path that held only empty objects (or arrays of them) is left out, as
// [Inferrer.Omitted] says: it has no field to make a column of.
//
// Errors: no object was added, no path has a type, or a path held an
// object or an array and also another kind; that error names the path
// and the records where each kind was first seen, and is what
// `mink table create --infer` prints.
func (i *Inferrer) Struct() (*iceberg.StructType, error) {
	if i.root == nil {
		return nil, fmt.Errorf("no JSON object among the %d records to infer a schema from", i.records)
	}
	t, err := i.root.typ("")
	if err != nil {
		return nil, err
	}
	if t == nil {
		return nil, fmt.Errorf("no field to infer: the %d records hold only empty objects", i.records)
	}
	next := 1
	return renumber(t, &next).(*iceberg.StructType), nil
}

// Omitted returns the paths Struct leaves out because every value seen
// there was an empty object (or null, or a list of those), in first-seen
// order; list elements are "element" ("a.element.b"). When later records
// give them keys, the keys are unknown fields until the schema evolves.
func (i *Inferrer) Omitted() []string {
	if i.root == nil {
		return nil
	}
	var out []string
	i.root.omitted("", &out)
	return out
}

func (s *shape) omitted(path string, out *[]string) {
	for _, k := range s.keys {
		f := s.fields[k]
		p := join(path, k)
		if f.object == 0 && f.array == 0 {
			continue
		}
		if t, err := f.typ(p); err == nil && t == nil {
			*out = append(*out, p)
			continue
		}
		f.omitted(p, out)
	}
	if s.elem != nil {
		s.elem.omitted(join(path, "element"), out)
	}
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// typ types the shape at path; nil when it has nothing but empty objects.
func (s *shape) typ(path string) (iceberg.Type, error) {
	if err := s.conflict(path); err != nil {
		return nil, err
	}
	switch {
	case s.object != 0:
		var fields []iceberg.NestedField
		for _, k := range s.keys {
			t, err := s.fields[k].typ(join(path, k))
			if err != nil {
				return nil, err
			}
			if t != nil {
				fields = append(fields, iceberg.NestedField{Name: k, Type: t})
			}
		}
		if len(fields) == 0 {
			return nil, nil
		}
		return &iceberg.StructType{FieldList: fields}, nil
	case s.array != 0:
		if s.elem == nil {
			return &iceberg.ListType{Element: iceberg.PrimitiveTypes.String}, nil
		}
		t, err := s.elem.typ(join(path, "element"))
		if err != nil || t == nil {
			return nil, err
		}
		return &iceberg.ListType{Element: t}, nil
	}
	kinds := 0
	for _, at := range []int{s.boolean, s.integer, s.number, s.str} {
		if at != 0 {
			kinds++
		}
	}
	switch {
	case kinds == 1 && s.boolean != 0:
		return iceberg.PrimitiveTypes.Bool, nil
	case kinds == 1 && s.integer != 0:
		return iceberg.PrimitiveTypes.Int64, nil
	case (kinds == 1 && s.number != 0 || kinds == 2 && s.integer != 0 && s.number != 0) && !s.notDouble:
		return iceberg.PrimitiveTypes.Float64, nil
	}
	// Strings, null alone, mixed scalars, numbers no double holds exactly:
	// a string column takes each value's JSON text.
	return iceberg.PrimitiveTypes.String, nil
}

// conflict reports an object or array seen at path with another kind.
func (s *shape) conflict(path string) error {
	seen := []struct {
		what string
		at   int
	}{
		{"an object", s.object}, {"an array", s.array}, {"a string", s.str},
		{"a number", min0(s.integer, s.number)}, {"a boolean", s.boolean},
	}
	kinds, composite := 0, false
	var parts []string
	sort.SliceStable(seen, func(a, b int) bool { return seen[a].at < seen[b].at })
	for _, k := range seen {
		if k.at == 0 {
			continue
		}
		kinds++
		composite = composite || k.what == "an object" || k.what == "an array"
		parts = append(parts, fmt.Sprintf("%s (record %d)", k.what, k.at))
	}
	if kinds < 2 || !composite {
		return nil
	}
	if path == "" {
		path = "(top level)"
	}
	return fmt.Errorf("%w: field %s: seen as %s; one column has one type: declare the schema instead of inferring it",
		ErrConflict, path, strings.Join(parts, " and as "))
}

// min0 is the smaller non-zero of a and b (0 if both are 0).
func min0(a, b int) int {
	if a == 0 || (b != 0 && b < a) {
		return b
	}
	return a
}

// renumber sets placeholder field ids from *next on, in depth-first
// pre-order. Every field and list element is optional.
func renumber(t iceberg.Type, next *int) iceberg.Type {
	switch t := t.(type) {
	case *iceberg.StructType:
		for j := range t.FieldList {
			t.FieldList[j].ID = *next
			*next++
			t.FieldList[j].Type = renumber(t.FieldList[j].Type, next)
		}
	case *iceberg.ListType:
		t.ElementID = *next
		*next++
		t.Element = renumber(t.Element, next)
	}
	return t
}

// exactDouble reports whether the JSON number lit converts to a double as
// codec's decoder converts it: finite, not rounded to zero, and, for an
// integer literal, exactly.
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

// val is one parsed JSON value, objects in document order.
type val struct {
	kind  kind
	keys  []string
	vals  []*val
	elems []*val
	str   string // a number's literal
}

type kind uint8

const (
	kNull kind = iota
	kBool
	kNumber
	kString
	kArray
	kObject
)

func article(k kind) string {
	return [...]string{"null", "a boolean", "a number", "a string", "an array", "an object"}[k]
}

func parse(b []byte) (*val, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	v, err := parseValue(dec, "", 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("invalid JSON: data after the value")
	}
	return v, nil
}

func token(dec *json.Decoder) (json.Token, error) {
	tok, err := dec.Token()
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	return tok, nil
}

// parseValue parses the value at path, depth objects and arrays deep.
func parseValue(dec *json.Decoder, path string, depth int) (*val, error) {
	tok, err := token(dec)
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); ok && (d == '[' || d == '{') && depth == MaxDepth {
		if path == "" {
			path = "(top level)"
		}
		return nil, fmt.Errorf("%w: field %s: an %s at depth %d, deeper than %d levels",
			ErrTooDeep, path, map[json.Delim]string{'[': "array", '{': "object"}[d], depth+1, MaxDepth)
	}
	switch t := tok.(type) {
	case nil:
		return &val{kind: kNull}, nil
	case bool:
		return &val{kind: kBool}, nil
	case json.Number:
		return &val{kind: kNumber, str: string(t)}, nil
	case string:
		return &val{kind: kString}, nil
	case json.Delim:
		if t == '[' {
			v := &val{kind: kArray}
			for dec.More() {
				e, err := parseValue(dec, join(path, "element"), depth+1)
				if err != nil {
					return nil, err
				}
				v.elems = append(v.elems, e)
			}
			if _, err := token(dec); err != nil { // ']'
				return nil, err
			}
			return v, nil
		}
		v := &val{kind: kObject}
		var seen map[string]bool
		for dec.More() {
			tok, err := token(dec)
			if err != nil {
				return nil, err
			}
			key := tok.(string)
			if seen == nil {
				seen = map[string]bool{}
			}
			if seen[key] {
				return nil, fmt.Errorf("field %s: the key appears twice in one object", join(path, key))
			}
			seen[key] = true
			e, err := parseValue(dec, join(path, key), depth+1)
			if err != nil {
				return nil, err
			}
			v.keys = append(v.keys, key)
			v.vals = append(v.vals, e)
		}
		if _, err := token(dec); err != nil { // '}'
			return nil, err
		}
		return v, nil
	}
	return nil, fmt.Errorf("invalid JSON: unexpected token %v", tok)
}
