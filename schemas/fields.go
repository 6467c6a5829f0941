package schemas

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/apache/iceberg-go"

	"github.com/minkhq/mink/codec"
	"github.com/minkhq/mink/codec/avro"
	"github.com/minkhq/mink/pgstore"
	"github.com/minkhq/mink/tables"
)

// FieldsByID maps byPath, what a converted writer schema says of its
// fields by path (codec.ConvertWriterFields), to the field ids of the part
// of schema a key (below the key column) or a value (the value columns)
// fills. Paths schema lacks are left out.
func FieldsByID(schema *iceberg.Schema, keyFormat codec.Format, key bool, byPath map[string]avro.Field) avro.Fields {
	out := avro.Fields{}
	if len(byPath) == 0 {
		return out
	}
	part := rolePart(schema, keyFormat, key)
	if key && len(part) == 1 {
		walkPaths(part[0].Type, "", byPath, out)
		return out
	}
	walkPaths(&iceberg.StructType{FieldList: part}, "", byPath, out)
	return out
}

func walkPaths(t iceberg.Type, prefix string, byPath map[string]avro.Field, out avro.Fields) {
	switch t := t.(type) {
	case *iceberg.StructType:
		for _, f := range t.FieldList {
			p := join(prefix, f.Name)
			if x, ok := byPath[p]; ok {
				out[f.ID] = x
			}
			walkPaths(f.Type, p, byPath, out)
		}
	case *iceberg.ListType:
		walkPaths(t.Element, prefix+".element", byPath, out)
	case *iceberg.MapType:
		walkPaths(t.ValueType, prefix+".value", byPath, out)
	}
}

// nextFields are the fields of version next, evolved from latest (whose
// fields are cur) by a writer that says inc of its fields: latest's
// fields stay as they are; a field next adds (an id above latest's
// highest) takes its default from inc, so a column's default is the one
// of the schema that brought it, for good; aliases add up.
func nextFields(latest, next *iceberg.Schema, cur, inc avro.Fields) avro.Fields {
	out := make(avro.Fields, len(cur)+len(inc))
	for id, f := range cur {
		out[id] = f
	}
	high := latest.HighestFieldID()
	for id, f := range inc {
		if _, ok := next.FindFieldByID(id); !ok {
			continue
		}
		o, had := out[id]
		if !had && id > high {
			o.Type, o.Default = f.Type, f.Default
		}
		for _, a := range f.Aliases {
			if !slices.Contains(o.Aliases, a) {
				o.Aliases = append(o.Aliases, a)
			}
		}
		if o.Default != nil || len(o.Aliases) > 0 {
			out[id] = o
		}
	}
	return out
}

// Fields returns what version id of table keeps of its registry schemas'
// fields beyond their Iceberg types (Avro defaults and aliases, by field
// id; empty when none).
func (s *Store) Fields(ctx context.Context, table int64, id int) (avro.Fields, error) {
	k := versionKey{table, id}
	s.mu.Lock()
	f, ok := s.fields[k]
	s.mu.Unlock()
	if ok {
		return f, nil
	}
	f, err := storedFields(ctx, s.pool, table, id)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.fields[k] = f
	s.mu.Unlock()
	return f, nil
}

func storedFields(ctx context.Context, q tables.Querier, table int64, id int) (avro.Fields, error) {
	b, err := tables.SchemaVersionFields(ctx, q, table, id)
	if err != nil {
		if errors.Is(err, tables.ErrNotFound) {
			return nil, fmt.Errorf("schemas: table %d has no schema version %d", table, id)
		}
		return nil, pgstore.Unavailable(err)
	}
	f := avro.Fields{}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("schemas: table %d version %d: stored fields: %w", table, id, err)
	}
	return f, nil
}

// renameByAliases matches the fields of cur (the table's columns) and inc
// (a writer's converted columns) that Avro aliases name as one (Avro spec
// 1.12, "Aliases"), at every depth: an incoming field whose aliases
// (byPath, by incoming path) name a table field the writer lacks renames
// that column (same field id: an Iceberg rename); an incoming field named
// as an alias of a table field (fields, by id) is that column. A table
// field with a default that the writer lacks counts as written (its
// default fills it). It returns
// the columns so renamed and whether a table column was renamed.
func renameByAliases(cur, inc []iceberg.NestedField, prefix string, byPath map[string]avro.Field, fields avro.Fields) ([]iceberg.NestedField, []iceberg.NestedField, bool) {
	if len(byPath) == 0 && len(fields) == 0 {
		return cur, inc, false
	}
	cur, inc = slices.Clone(cur), slices.Clone(inc)
	names := func(fs []iceberg.NestedField) map[string]int {
		m := make(map[string]int, len(fs))
		for i, f := range fs {
			m[f.Name] = i
		}
		return m
	}
	curNames, incNames := names(cur), names(inc)
	renamed := false
	incPath := make([]string, len(inc)) // each incoming field's path as written
	for i, f := range inc {
		incPath[i] = join(prefix, f.Name)
	}
	for i, f := range inc {
		if _, ok := curNames[f.Name]; ok {
			continue
		}
		matched := false
		for _, a := range byPath[incPath[i]].Aliases {
			j, ok := curNames[a]
			if _, written := incNames[a]; !ok || written {
				continue
			}
			delete(curNames, a)
			cur[j].Name = f.Name
			curNames[f.Name] = j
			renamed, matched = true, true
			break
		}
		if matched {
			continue
		}
		for _, c := range cur {
			if _, written := incNames[c.Name]; written || !slices.Contains(fields[c.ID].Aliases, f.Name) {
				continue
			}
			delete(incNames, f.Name)
			inc[i].Name = c.Name
			incNames[c.Name] = i
			break
		}
	}
	// A column with a default keeps a value for writers that lack it:
	// they need not make it optional.
	for _, c := range cur {
		if _, written := incNames[c.Name]; !written && fields[c.ID].Default != nil {
			inc = append(inc, c)
			incPath = append(incPath, join(prefix, c.Name))
		}
	}
	for i := range inc {
		j, ok := curNames[inc[i].Name]
		if !ok {
			continue
		}
		ct, it, r := renameType(cur[j].Type, inc[i].Type, incPath[i], byPath, fields)
		cur[j].Type, inc[i].Type = ct, it
		renamed = renamed || r
	}
	return cur, inc, renamed
}

func renameType(c, i iceberg.Type, path string, byPath map[string]avro.Field, fields avro.Fields) (iceberg.Type, iceberg.Type, bool) {
	switch ct := c.(type) {
	case *iceberg.StructType:
		if it, ok := i.(*iceberg.StructType); ok {
			cf, inf, r := renameByAliases(ct.FieldList, it.FieldList, path, byPath, fields)
			return &iceberg.StructType{FieldList: cf}, &iceberg.StructType{FieldList: inf}, r
		}
	case *iceberg.ListType:
		if it, ok := i.(*iceberg.ListType); ok {
			ce, ie, r := renameType(ct.Element, it.Element, path+".element", byPath, fields)
			c2, i2 := *ct, *it
			c2.Element, i2.Element = ce, ie
			return &c2, &i2, r
		}
	case *iceberg.MapType:
		if it, ok := i.(*iceberg.MapType); ok {
			cv, iv, r := renameType(ct.ValueType, it.ValueType, path+".value", byPath, fields)
			c2, i2 := *ct, *it
			c2.ValueType, i2.ValueType = cv, iv
			return &c2, &i2, r
		}
	}
	return c, i, false
}
