package schemas_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/codec"
	"github.com/minkhq/mink/schemas"
)

var (
	tInt    = iceberg.PrimitiveTypes.Int32
	tLong   = iceberg.PrimitiveTypes.Int64
	tFloat  = iceberg.PrimitiveTypes.Float32
	tDouble = iceberg.PrimitiveTypes.Float64
	tString = iceberg.PrimitiveTypes.String
	tBool   = iceberg.PrimitiveTypes.Bool
)

// opt and req build incoming fields. Their ids are placeholders, all 0:
// Initial and Evolve ignore them.
func opt(name string, t iceberg.Type) iceberg.NestedField {
	return iceberg.NestedField{Name: name, Type: t}
}

func req(name string, t iceberg.Type) iceberg.NestedField {
	return iceberg.NestedField{Name: name, Type: t, Required: true}
}

func doc(f iceberg.NestedField, d string) iceberg.NestedField {
	f.Doc = d
	return f
}

func st(fields ...iceberg.NestedField) *iceberg.StructType {
	return &iceberg.StructType{FieldList: fields}
}

func listOf(elem iceberg.Type, elemRequired bool) *iceberg.ListType {
	return &iceberg.ListType{Element: elem, ElementRequired: elemRequired}
}

func mapOf(key, val iceberg.Type, valRequired bool) *iceberg.MapType {
	return &iceberg.MapType{KeyType: key, ValueType: val, ValueRequired: valRequired}
}

func dec(p, s int) iceberg.DecimalType { return iceberg.DecimalTypeOf(p, s) }

// dump writes the columns of s after _kafka one a line, nested ones
// indented: "<id> <name> required|optional <type>", with a doc in quotes.
func dump(s *iceberg.Schema) string {
	var b strings.Builder
	var field func(depth, id int, name string, required bool, t iceberg.Type, doc string)
	field = func(depth, id int, name string, required bool, t iceberg.Type, doc string) {
		kind := t.String()
		switch t.(type) {
		case *iceberg.StructType:
			kind = "struct"
		case *iceberg.ListType:
			kind = "list"
		case *iceberg.MapType:
			kind = "map"
		}
		q := "optional"
		if required {
			q = "required"
		}
		fmt.Fprintf(&b, "%s%d %s %s %s", strings.Repeat("  ", depth), id, name, q, kind)
		if doc != "" {
			fmt.Fprintf(&b, " %q", doc)
		}
		b.WriteByte('\n')
		switch t := t.(type) {
		case *iceberg.StructType:
			for _, f := range t.FieldList {
				field(depth+1, f.ID, f.Name, f.Required, f.Type, f.Doc)
			}
		case *iceberg.ListType:
			field(depth+1, t.ElementID, "element", t.ElementRequired, t.Element, "")
		case *iceberg.MapType:
			field(depth+1, t.KeyID, "key", true, t.KeyType, "")
			field(depth+1, t.ValueID, "value", t.ValueRequired, t.ValueType, "")
		}
	}
	for _, f := range schemas.Columns(s) {
		field(0, f.ID, f.Name, f.Required, f.Type, f.Doc)
	}
	return b.String()
}

// golden trims the leading newline and the tab indentation of a raw string
// literal, so that expectations line up in the source.
func golden(s string) string {
	lines := strings.Split(strings.TrimPrefix(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimLeft(l, "\t")
	}
	return strings.Join(lines, "\n")
}

// orders is the base table of most cases.
func orders() []iceberg.NestedField {
	return []iceberg.NestedField{
		req("id", tLong),
		req("customer", st(req("id", tLong), opt("email", tString))),
		opt("count", tInt),
		opt("price", dec(9, 2)),
		opt("ratio", tFloat),
		opt("tags", listOf(st(req("name", tString)), true)),
		opt("attrs", mapOf(tString, st(req("v", tLong)), true)),
	}
}

const ordersDump = `
	11 id required long
	12 customer required struct
	  13 id required long
	  14 email optional string
	15 count optional int
	16 price optional decimal(9, 2)
	17 ratio optional float
	18 tags optional list
	  19 element required struct
	    20 name required string
	21 attrs optional map
	  22 key required string
	  23 value optional struct
	    24 v required long
	`

// edit returns orders() with fn applied, by index: 0 id, 1 customer,
// 2 count, 3 price, 4 ratio, 5 tags, 6 attrs.
func edit(fn func(c []iceberg.NestedField) []iceberg.NestedField) []iceberg.NestedField {
	return fn(orders())
}

func initial(t *testing.T, cols []iceberg.NestedField) (*iceberg.Schema, int) {
	t.Helper()
	s, last, err := schemas.Initial(codec.Raw, codec.JSON, cols)
	require.NoError(t, err)
	return s, last
}

func TestInitial(t *testing.T) {
	s, last := initial(t, orders())
	require.Equal(t, 0, s.ID)
	require.Equal(t, 24, last)
	require.Equal(t, golden(ordersDump), dump(s))
	// _kafka is codec's, ids 1-10.
	kafka, err := codec.TableSchema(codec.Raw, codec.Raw, nil)
	require.NoError(t, err)
	k := kafka.Field(0)
	require.True(t, k.Equals(s.Field(0)))

	_, _, err = schemas.Initial(codec.Raw, codec.JSON, nil)
	require.EqualError(t, err, "table schema: no column besides _kafka")
	_, _, err = schemas.Initial(codec.Raw, codec.JSON, []iceberg.NestedField{opt("_kafka", tLong)})
	require.EqualError(t, err, "field _kafka: the name is reserved for Kafka metadata")
	_, _, err = schemas.Initial(codec.Raw, codec.JSON, []iceberg.NestedField{opt("a", st(opt("b", tLong), opt("b", tInt)))})
	require.EqualError(t, err, "field a.b: the name appears twice in one struct")
	_, _, err = schemas.Initial(codec.Raw, codec.JSON, []iceberg.NestedField{opt("a", nil)})
	require.EqualError(t, err, "field a: no type")
}

func TestEvolve(t *testing.T) {
	cases := []struct {
		name     string
		current  []iceberg.NestedField // by Initial; orders() when nil
		incoming []iceberg.NestedField
		want     string // dump of next; "" when nothing changes
		wantLast int    // when want is set
		// wantFirst is the path of the first change, which Compatible names.
		wantFirst string
	}{
		{
			name:     "same schema",
			incoming: orders(),
		},
		{
			name: "narrower incoming types and optional into required are kept",
			incoming: edit(func(c []iceberg.NestedField) []iceberg.NestedField {
				c[0] = req("id", tInt)         // int into long
				c[2] = req("count", tInt)      // required into optional
				c[3] = opt("price", dec(7, 2)) // decimal(7,2) into decimal(9,2)
				c[6] = opt("attrs", mapOf(tString, st(req("v", tInt)), true))
				return c
			}),
		},
		{
			name: "a doc alone makes no version",
			incoming: edit(func(c []iceberg.NestedField) []iceberg.NestedField {
				c[2] = doc(c[2], "items ordered")
				return c
			}),
		},
		{
			name: "promotions keep ids",
			incoming: edit(func(c []iceberg.NestedField) []iceberg.NestedField {
				c[2] = opt("count", tLong)
				c[3] = opt("price", dec(18, 2))
				c[4] = doc(opt("ratio", tDouble), "share of the total")
				c[6] = opt("attrs", mapOf(tString, st(req("v", tLong)), true))
				return c
			}),
			want: `
			11 id required long
			12 customer required struct
			  13 id required long
			  14 email optional string
			15 count optional long
			16 price optional decimal(18, 2)
			17 ratio optional double "share of the total"
			18 tags optional list
			  19 element required struct
			    20 name required string
			21 attrs optional map
			  22 key required string
			  23 value optional struct
			    24 v required long
			`,
			wantLast:  24,
			wantFirst: "count",
		},
		{
			name: "required to optional at every depth",
			incoming: edit(func(c []iceberg.NestedField) []iceberg.NestedField {
				c[1] = req("customer", st(opt("id", tLong), opt("email", tString)))
				c[5] = opt("tags", listOf(st(req("name", tString)), false))
				c[6] = opt("attrs", mapOf(tString, st(opt("v", tLong)), false))
				return c
			}),
			want: `
			11 id required long
			12 customer required struct
			  13 id optional long
			  14 email optional string
			15 count optional int
			16 price optional decimal(9, 2)
			17 ratio optional float
			18 tags optional list
			  19 element optional struct
			    20 name required string
			21 attrs optional map
			  22 key required string
			  23 value optional struct
			    24 v optional long
			`,
			wantLast:  24,
			wantFirst: "customer.id",
		},
		{
			name: "dropped fields are kept, required ones become optional",
			incoming: []iceberg.NestedField{
				req("customer", st(opt("email", tString))),
				opt("tags", listOf(st(), true)),
			},
			want: `
			11 id optional long
			12 customer required struct
			  13 id optional long
			  14 email optional string
			15 count optional int
			16 price optional decimal(9, 2)
			17 ratio optional float
			18 tags optional list
			  19 element required struct
			    20 name optional string
			21 attrs optional map
			  22 key required string
			  23 value optional struct
			    24 v required long
			`,
			wantLast:  24,
			wantFirst: "id",
		},
		{
			name: "a dropped optional field changes nothing",
			incoming: edit(func(c []iceberg.NestedField) []iceberg.NestedField {
				return c[:2]
			}),
		},
		{
			name: "new fields at every depth take ids in pre-order",
			incoming: edit(func(c []iceberg.NestedField) []iceberg.NestedField {
				c[1] = req("customer", st(
					req("id", tLong), opt("email", tString),
					// A nested add, a required struct with a required field:
					// the struct is added optional, its field stays required.
					doc(req("details", st(req("name", tString), opt("since", iceberg.PrimitiveTypes.Date))), "from the CRM")))
				c[5] = opt("tags", listOf(st(req("name", tString), opt("weight", tDouble)), true))
				c[6] = opt("attrs", mapOf(tString, st(req("v", tLong), opt("unit", tString)), true))
				return append(c,
					req("lines", listOf(st(req("sku", tString), opt("qty", tInt)), true)),
					opt("notes", mapOf(tString, listOf(tString, false), false)),
					opt("paid", tBool))
			}),
			want: `
			11 id required long
			12 customer required struct
			  13 id required long
			  14 email optional string
			  25 details optional struct "from the CRM"
			    26 name required string
			    27 since optional date
			15 count optional int
			16 price optional decimal(9, 2)
			17 ratio optional float
			18 tags optional list
			  19 element required struct
			    20 name required string
			    28 weight optional double
			21 attrs optional map
			  22 key required string
			  23 value optional struct
			    24 v required long
			    29 unit optional string
			30 lines optional list
			  31 element required struct
			    32 sku required string
			    33 qty optional int
			34 notes optional map
			  35 key required string
			  36 value optional list
			    37 element optional string
			38 paid optional boolean
			`,
			wantLast:  38,
			wantFirst: "customer.details",
		},
		{
			name: "docs fill empty docs only, with another change",
			current: []iceberg.NestedField{
				doc(req("id", tLong), "order id"),
				opt("count", tInt),
			},
			incoming: []iceberg.NestedField{
				doc(req("id", tLong), "the order's id"),
				doc(opt("count", tInt), "items ordered"),
				opt("paid", tBool),
			},
			want: `
			11 id required long "order id"
			12 count optional int "items ordered"
			13 paid optional boolean
			`,
			wantLast:  13,
			wantFirst: "paid",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cols := c.current
			if cols == nil {
				cols = orders()
			}
			cur, last := initial(t, cols)
			before, err := json.Marshal(cur)
			require.NoError(t, err)

			next, newLast, changed, err := schemas.Evolve(cur, last, c.incoming)
			require.NoError(t, err)
			after, err := json.Marshal(cur)
			require.NoError(t, err)
			require.JSONEq(t, string(before), string(after), "Evolve modified the current schema")

			cerr := schemas.Compatible(cur, c.incoming)
			if c.want == "" {
				require.False(t, changed)
				require.Same(t, cur, next)
				require.Equal(t, last, newLast)
				require.NoError(t, cerr)
				return
			}
			require.True(t, changed)
			require.Equal(t, cur.ID+1, next.ID)
			require.Equal(t, golden(c.want), dump(next))
			require.Equal(t, c.wantLast, newLast)
			k := cur.Field(0)
			require.True(t, k.Equals(next.Field(0)), "_kafka changed")

			var ie *schemas.IncompatibleError
			require.ErrorAs(t, cerr, &ie)
			require.True(t, ie.Evolvable)
			require.Equal(t, c.wantFirst, ie.Path)
			require.Equal(t, schemas.ReasonEvolve, ie.Reason)

			// The result takes the incoming schema as it is, and is a
			// fixed point: evolving again changes nothing.
			require.NoError(t, schemas.Compatible(next, c.incoming))
			again, againLast, changed, err := schemas.Evolve(next, newLast, c.incoming)
			require.NoError(t, err)
			require.False(t, changed)
			require.Same(t, next, again)
			require.Equal(t, newLast, againLast)

			// Determinism: the same inputs give the same schema.
			twice, _, _, err := schemas.Evolve(cur, last, c.incoming)
			require.NoError(t, err)
			a, err := json.Marshal(next)
			require.NoError(t, err)
			b, err := json.Marshal(twice)
			require.NoError(t, err)
			require.JSONEq(t, string(a), string(b))

			// Iceberg-go and Arrow take the schema.
			_, err = table.SchemaToArrowSchema(next, nil, true, false)
			require.NoError(t, err)
		})
	}
}

func TestEvolveRefuses(t *testing.T) {
	cases := []struct {
		name     string
		incoming []iceberg.NestedField
		want     schemas.IncompatibleError
		text     string
	}{
		{
			name: "string to int",
			incoming: edit(func(c []iceberg.NestedField) []iceberg.NestedField {
				c[1] = req("customer", st(req("id", tLong), opt("email", tInt)))
				return c
			}),
			want: schemas.IncompatibleError{Path: "customer.email", From: "string", To: "int", Reason: schemas.ReasonPromotion},
			text: "field customer.email: table has string, schema has int; Iceberg allows only int→long, float→double, wider decimal precision and required→optional",
		},
		{
			name: "long to double",
			incoming: edit(func(c []iceberg.NestedField) []iceberg.NestedField {
				c[0] = req("id", tDouble)
				return c
			}),
			want: schemas.IncompatibleError{Path: "id", From: "long", To: "double", Reason: schemas.ReasonPromotion},
		},
		{
			name: "decimal scale",
			incoming: edit(func(c []iceberg.NestedField) []iceberg.NestedField {
				c[3] = opt("price", dec(18, 4))
				return c
			}),
			want: schemas.IncompatibleError{Path: "price", From: "decimal(9, 2)", To: "decimal(18, 4)", Reason: schemas.ReasonPromotion},
			text: "field price: table has decimal(9, 2), schema has decimal(18, 4); Iceberg allows only int→long, float→double, wider decimal precision and required→optional",
		},
		{
			name: "struct to primitive",
			incoming: edit(func(c []iceberg.NestedField) []iceberg.NestedField {
				c[1] = req("customer", tString)
				return c
			}),
			want: schemas.IncompatibleError{Path: "customer", From: "struct<id: required long, email: optional string>", To: "string", Reason: schemas.ReasonPromotion},
		},
		{
			name: "list to map",
			incoming: edit(func(c []iceberg.NestedField) []iceberg.NestedField {
				c[5] = opt("tags", mapOf(tString, tString, false))
				return c
			}),
			want: schemas.IncompatibleError{Path: "tags", From: "list<struct<name: required string>>", To: "map<string, string>", Reason: schemas.ReasonPromotion},
		},
		{
			name: "inside a list element",
			incoming: edit(func(c []iceberg.NestedField) []iceberg.NestedField {
				c[5] = opt("tags", listOf(st(req("name", tBool)), true))
				return c
			}),
			want: schemas.IncompatibleError{Path: "tags.element.name", From: "string", To: "boolean", Reason: schemas.ReasonPromotion},
		},
		{
			name: "map key type",
			incoming: edit(func(c []iceberg.NestedField) []iceberg.NestedField {
				c[6] = opt("attrs", mapOf(tInt, st(req("v", tLong)), true))
				return c
			}),
			want: schemas.IncompatibleError{Path: "attrs.key", From: "string", To: "int", Reason: schemas.ReasonMapKey},
			text: "field attrs.key: table has string, schema has int; Iceberg does not change map keys",
		},
		{
			name: "map value",
			incoming: edit(func(c []iceberg.NestedField) []iceberg.NestedField {
				c[6] = opt("attrs", mapOf(tString, tLong, true))
				return c
			}),
			want: schemas.IncompatibleError{Path: "attrs.value", From: "struct<v: required long>", To: "long", Reason: schemas.ReasonPromotion},
		},
		{
			name: "fixed length",
			incoming: edit(func(c []iceberg.NestedField) []iceberg.NestedField {
				return append(c[:1], opt("count", iceberg.FixedTypeOf(4)))
			}),
			want: schemas.IncompatibleError{Path: "count", From: "int", To: "fixed[4]", Reason: schemas.ReasonPromotion},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cur, last := initial(t, orders())
			next, _, changed, err := schemas.Evolve(cur, last, c.incoming)
			require.Nil(t, next)
			require.False(t, changed)
			var ie *schemas.IncompatibleError
			require.ErrorAs(t, err, &ie)
			require.Equal(t, c.want, *ie)
			if c.text != "" {
				require.EqualError(t, err, c.text)
			}
			require.Equal(t, err, schemas.Compatible(cur, c.incoming))
		})
	}
}

// TestEvolveMapKeys: Protobuf maps have int keys, which codec's JSON
// decoder does not take yet, so these tables are built by hand.
func TestEvolveMapKeys(t *testing.T) {
	longKeys := iceberg.NewSchema(0, codecKafka(t), iceberg.NestedField{ID: 11, Name: "m", Type: &iceberg.MapType{
		KeyID: 12, KeyType: tLong, ValueID: 13, ValueType: tString}})
	// A narrower key fits: no change.
	next, _, changed, err := schemas.Evolve(longKeys, 13, []iceberg.NestedField{opt("m", mapOf(tInt, tString, false))})
	require.NoError(t, err)
	require.False(t, changed)
	require.Same(t, longKeys, next)

	// A wider key does not: keys are never promoted.
	intKeys := iceberg.NewSchema(0, codecKafka(t), iceberg.NestedField{ID: 11, Name: "m", Type: &iceberg.MapType{
		KeyID: 12, KeyType: tInt, ValueID: 13, ValueType: tString}})
	_, _, _, err = schemas.Evolve(intKeys, 13, []iceberg.NestedField{opt("m", mapOf(tLong, tString, false))})
	require.EqualError(t, err, "field m.key: table has int, schema has long; Iceberg does not change map keys")

	// Struct keys take no new field either.
	structKeys := iceberg.NewSchema(0, codecKafka(t), iceberg.NestedField{ID: 11, Name: "m", Type: &iceberg.MapType{
		KeyID: 12, KeyType: st(iceberg.NestedField{ID: 14, Name: "a", Type: tInt, Required: true}), ValueID: 13, ValueType: tString}})
	_, _, _, err = schemas.Evolve(structKeys, 14, []iceberg.NestedField{opt("m", mapOf(st(req("a", tInt), opt("b", tInt)), tString, false))})
	require.EqualError(t, err, "field m.key: table has struct<a: required int>, schema has struct<a: required int, b: optional int>; Iceberg does not change map keys")
	_, _, changed, err = schemas.Evolve(structKeys, 14, []iceberg.NestedField{opt("m", mapOf(st(req("a", tInt)), tString, false))})
	require.NoError(t, err)
	require.False(t, changed)
}

func codecKafka(t *testing.T) iceberg.NestedField {
	t.Helper()
	s, err := codec.TableSchema(codec.Raw, codec.Raw, nil)
	require.NoError(t, err)
	return s.Field(0)
}

func TestEvolveInvalid(t *testing.T) {
	cur, last := initial(t, orders())
	cases := []struct {
		name     string
		current  *iceberg.Schema
		last     int
		incoming []iceberg.NestedField
		text     string
	}{
		{"kafka column", cur, last, append(orders(), opt("_kafka", tLong)), "field _kafka: the name is reserved for Kafka metadata"},
		{"duplicate nested name", cur, last, edit(func(c []iceberg.NestedField) []iceberg.NestedField {
			c[1] = req("customer", st(req("id", tLong), opt("id", tLong)))
			return c
		}), "field customer.id: the name appears twice in one struct"},
		{"duplicate name in a new field", cur, last, append(orders(), opt("x", st(opt("a", tInt), opt("a", tInt)))),
			"field x.a: the name appears twice in one struct"},
		{"no type", cur, last, append(orders(), opt("x", nil)), "field x: no type"},
		{"no name", cur, last, append(orders(), opt("", tInt)), "field <empty>: a field has no name"},
		{"last column id below the schema's", cur, 20, orders(), "last column id 20 is below the highest field id 24 of schema 0"},
		{"no _kafka", iceberg.NewSchema(3, iceberg.NestedField{ID: 1, Name: "a", Type: tLong}), 1, orders(), "current schema 3 does not start with _kafka"},
		{"nil schema", nil, 0, orders(), "current schema is nil"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, _, err := schemas.Evolve(c.current, c.last, c.incoming)
			require.EqualError(t, err, c.text)
			var ie *schemas.IncompatibleError
			require.False(t, errors.As(err, &ie))
			if c.last == last || c.current == nil {
				require.EqualError(t, schemas.Compatible(c.current, c.incoming), c.text)
			}
		})
	}
}

// TestEvolveLastColumnID: ids of dropped columns of older schemas are never
// reused, since fresh ids start after the table's last column id, not
// after the current schema's highest id.
func TestEvolveLastColumnID(t *testing.T) {
	cur, _ := initial(t, []iceberg.NestedField{opt("a", tLong)})
	next, last, changed, err := schemas.Evolve(cur, 40, []iceberg.NestedField{opt("a", tLong), opt("b", st(opt("c", tInt)))})
	require.NoError(t, err)
	require.True(t, changed)
	require.Equal(t, 42, last)
	require.Equal(t, golden(`
		11 a optional long
		41 b optional struct
		  42 c optional int
		`), dump(next))
}

// TestEvolveReAdd: a field a producer drops keeps its column; when it comes
// back it finds its id.
func TestEvolveReAdd(t *testing.T) {
	v1, last := initial(t, []iceberg.NestedField{req("a", tLong), req("b", tString)})
	v2, last, changed, err := schemas.Evolve(v1, last, []iceberg.NestedField{req("a", tLong)})
	require.NoError(t, err)
	require.True(t, changed)
	require.Equal(t, golden(`
		11 a required long
		12 b optional string
		`), dump(v2))
	v3, last, changed, err := schemas.Evolve(v2, last, []iceberg.NestedField{req("a", tLong), req("b", tString), opt("c", tInt)})
	require.NoError(t, err)
	require.True(t, changed)
	require.Equal(t, 13, last)
	require.Equal(t, 2, v3.ID)
	require.Equal(t, golden(`
		11 a required long
		12 b optional string
		13 c optional int
		`), dump(v3))
	// Records of every version read into the latest.
	require.NoError(t, schemas.Compatible(v3, []iceberg.NestedField{req("a", tLong), req("b", tString)}))
	require.NoError(t, schemas.Compatible(v3, []iceberg.NestedField{req("a", tLong)}))
}

func TestEvolveIdentifierFields(t *testing.T) {
	base, last := initial(t, []iceberg.NestedField{req("a", tLong), req("b", tLong)})
	cur := iceberg.NewSchemaWithIdentifiers(0, []int{11, 12}, base.Fields()...)
	next, _, changed, err := schemas.Evolve(cur, last, []iceberg.NestedField{req("a", tLong)})
	require.NoError(t, err)
	require.True(t, changed)
	require.Equal(t, []int{11}, next.IdentifierFieldIDs) // b became optional
}

// The evolution sequence (issue 11, "Tests"): v1 {id, customer{id}}
// → v2 adds customer.details{name}, a nested add → v3 widens an int to long
// → v4 changes a string to an int, which the table refuses.
func TestEvolutionSequence(t *testing.T) {
	v1 := []iceberg.NestedField{
		req("id", tLong),
		req("customer", st(req("id", tLong), opt("email", tString))),
		opt("count", tInt),
	}
	v2 := []iceberg.NestedField{
		req("id", tLong),
		req("customer", st(req("id", tLong), opt("email", tString), opt("details", st(req("name", tString))))),
		opt("count", tInt),
	}
	v3 := []iceberg.NestedField{
		req("id", tLong),
		req("customer", st(req("id", tLong), opt("email", tString), opt("details", st(req("name", tString))))),
		opt("count", tLong),
	}
	v4 := []iceberg.NestedField{
		req("id", tLong),
		req("customer", st(req("id", tLong), opt("email", tInt), opt("details", st(req("name", tString))))),
		opt("count", tLong),
	}

	s1, last := initial(t, v1)
	require.Equal(t, golden(`
		11 id required long
		12 customer required struct
		  13 id required long
		  14 email optional string
		15 count optional int
		`), dump(s1))
	require.Equal(t, 15, last)

	var ie *schemas.IncompatibleError
	require.ErrorAs(t, schemas.Compatible(s1, v2), &ie)
	require.Equal(t, schemas.IncompatibleError{Path: "customer.details", To: "struct<name: required string>",
		Reason: schemas.ReasonEvolve, Evolvable: true}, *ie)
	require.EqualError(t, ie, "field customer.details: table has no such field, schema has struct<name: required string>; the table schema must evolve first")
	s2, last, changed, err := schemas.Evolve(s1, last, v2)
	require.NoError(t, err)
	require.True(t, changed)
	require.Equal(t, 1, s2.ID)
	require.Equal(t, 17, last)
	require.Equal(t, golden(`
		11 id required long
		12 customer required struct
		  13 id required long
		  14 email optional string
		  16 details optional struct
		    17 name required string
		15 count optional int
		`), dump(s2))

	require.ErrorAs(t, schemas.Compatible(s2, v3), &ie)
	require.Equal(t, schemas.IncompatibleError{Path: "count", From: "int", To: "long", Reason: schemas.ReasonEvolve, Evolvable: true}, *ie)
	s3, last, changed, err := schemas.Evolve(s2, last, v3)
	require.NoError(t, err)
	require.True(t, changed)
	require.Equal(t, 2, s3.ID)
	require.Equal(t, 17, last)
	require.Equal(t, golden(`
		11 id required long
		12 customer required struct
		  13 id required long
		  14 email optional string
		  16 details optional struct
		    17 name required string
		15 count optional long
		`), dump(s3))

	s4, _, changed, err := schemas.Evolve(s3, last, v4)
	require.Nil(t, s4)
	require.False(t, changed)
	require.EqualError(t, err, "field customer.email: table has string, schema has int; Iceberg allows only int→long, float→double, wider decimal precision and required→optional")
	require.ErrorAs(t, err, &ie)
	require.Equal(t, schemas.IncompatibleError{Path: "customer.email", From: "string", To: "int", Reason: schemas.ReasonPromotion}, *ie)
	require.Equal(t, err, schemas.Compatible(s3, v4))

	// Records of v1, v2 and v3 all read into the final schema as it is.
	for _, v := range [][]iceberg.NestedField{v1, v2, v3} {
		require.NoError(t, schemas.Compatible(s3, v))
	}

	// A v1 row, written with the v1 schema, reads back under v3 through
	// its field ids: count promoted, customer.details null.
	got := readAs(t, s1, s3, func(b *array.RecordBuilder) {
		b.Field(0).(*array.Int64Builder).Append(7)
		cust := b.Field(1).(*array.StructBuilder)
		cust.Append(true)
		cust.FieldBuilder(0).(*array.Int64Builder).Append(42)
		cust.FieldBuilder(1).(*array.StringBuilder).Append("a@example.com")
		b.Field(2).(*array.Int32Builder).Append(2147483647)
	})
	require.Equal(t, int64(7), got.Column(0).(*array.Int64).Value(0))
	cust := got.Column(1).(*array.Struct)
	require.Equal(t, int64(42), cust.Field(0).(*array.Int64).Value(0))
	require.Equal(t, "a@example.com", cust.Field(1).(*array.String).Value(0))
	require.True(t, cust.Field(2).IsNull(0), "customer.details")
	require.Equal(t, arrow.PrimitiveTypes.Int64, got.Column(2).DataType())
	require.Equal(t, int64(2147483647), got.Column(2).(*array.Int64).Value(0))
}

// readAs builds one row of the value columns of schema file with fill,
// and reads it back as the value columns of schema read, the way
// iceberg-go reads an old data file under a newer schema.
func readAs(t *testing.T, file, read *iceberg.Schema, fill func(*array.RecordBuilder)) arrow.RecordBatch {
	t.Helper()
	fileCols := iceberg.NewSchema(file.ID, schemas.Columns(file)...)
	readCols := iceberg.NewSchema(read.ID, schemas.Columns(read)...)
	as, err := table.SchemaToArrowSchema(fileCols, nil, true, false)
	require.NoError(t, err)
	b := array.NewRecordBuilder(memory.DefaultAllocator, as)
	defer b.Release()
	fill(b)
	rec := b.NewRecordBatch()
	defer rec.Release()
	got, err := table.ToRequestedSchema(context.Background(), readCols, fileCols, rec, table.SchemaOptions{IncludeFieldIDs: true})
	require.NoError(t, err)
	t.Cleanup(got.Release)
	require.EqualValues(t, 1, got.NumRows())
	return got
}

// A table created before map values became always optional keeps its
// required map values until a writer schema brings optional ones (an
// allowed change); a map column added by evolution has optional values,
// as codec.TableSchema gives them: iceberg-go v0.7.0 cannot scan required
// map values.
func TestEvolveRequiredMapValues(t *testing.T) {
	cur, last := initial(t, []iceberg.NestedField{req("id", tLong), opt("attrs", mapOf(tString, tLong, true))})
	attrs := cur.Field(2)
	require.False(t, attrs.Type.(*iceberg.MapType).ValueRequired)
	m := *attrs.Type.(*iceberg.MapType)
	m.ValueRequired = true
	attrs.Type = &m
	old := iceberg.NewSchema(cur.ID, cur.Field(0), cur.Field(1), attrs)

	next, _, changed, err := schemas.Evolve(old, last, []iceberg.NestedField{req("id", tLong), opt("attrs", mapOf(tString, tLong, true))})
	require.NoError(t, err)
	require.False(t, changed, "the stored schema is kept")
	require.Same(t, old, next)

	next, newLast, changed, err := schemas.Evolve(old, last, []iceberg.NestedField{req("id", tLong), opt("attrs", mapOf(tString, tLong, false)),
		opt("more", mapOf(tString, tInt, true))})
	require.NoError(t, err)
	require.True(t, changed)
	require.Equal(t, golden(`
	11 id required long
	12 attrs optional map
	  13 key required string
	  14 value optional long
	15 more optional map
	  16 key required string
	  17 value optional int
	`), dump(next))
	require.Equal(t, 17, newLast)
}
