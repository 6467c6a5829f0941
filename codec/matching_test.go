package codec_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/codec"
)

var (
	exact           = codec.JSONOptions{FieldMatching: codec.MatchExact}
	caseInsensitive = codec.JSONOptions{FieldMatching: codec.MatchCaseInsensitive}
)

func paths(dec *codec.Decoder) []string {
	var out []string
	for _, p := range dec.UnknownPaths() {
		out = append(out, string(p))
	}
	return out
}

func TestJSONOptionsOf(t *testing.T) {
	o, err := codec.JSONOptionsOf(nil)
	require.NoError(t, err)
	require.Equal(t, codec.JSONOptions{FieldMatching: codec.MatchExact, UnknownFields: codec.UnknownIgnore}, o)
	o, err = codec.JSONOptionsOf(map[string]string{"mink.json.field-matching": "case-insensitive", "mink.json.unknown-fields": "dead-letter"})
	require.NoError(t, err)
	require.Equal(t, codec.JSONOptions{FieldMatching: codec.MatchCaseInsensitive, UnknownFields: codec.UnknownDeadLetter}, o)
	_, err = codec.JSONOptionsOf(map[string]string{"mink.json.field-matching": "CASE-INSENSITIVE"})
	require.EqualError(t, err, `property mink.json.field-matching must be exact or case-insensitive, not "CASE-INSENSITIVE"`)
	_, err = codec.JSONOptionsOf(map[string]string{"mink.json.unknown-fields": ""})
	require.EqualError(t, err, `property mink.json.unknown-fields must be ignore or dead-letter, not ""`)
}

// The case of issue #9: columns VBELN and AUFNR, a record with lower-case
// keys. Exact matching makes it a dead letter naming the keys (it used to
// be a row of nulls); case-insensitive matching fills the columns.
func TestJSONFieldMatchingIssueCase(t *testing.T) {
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "VBELN", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 2, Name: "AUFNR", Type: iceberg.PrimitiveTypes.String})
	upper, lower := `{"VBELN":"0001","AUFNR":"A1"}`, `{"vbeln":"0002","aufnr":"A2"}`

	for _, opts := range []codec.JSONOptions{{}, exact} {
		rec, dec, err := rowsWith(t, opts, sc, upper)
		require.NoError(t, err)
		require.Equal(t, "0001", rec.Column(1).(*array.String).Value(0))
		require.Equal(t, 0, dec.Unknown())

		_, dec, err = rowsWith(t, opts, sc, lower)
		require.EqualError(t, err, `no key of the object matches a column (mink.json.field-matching = exact); unknown fields: "vbeln", "aufnr"`)
		require.Equal(t, 2, dec.Unknown(), "a dead letter for its unknown fields counts them")
		require.Equal(t, []string{"vbeln", "aufnr"}, paths(dec))
	}

	rec, dec, err := rowsWith(t, caseInsensitive, sc, upper, lower, `{"Vbeln":"0003"}`)
	require.NoError(t, err)
	require.Equal(t, 0, dec.Unknown())
	vbeln, aufnr := rec.Column(1).(*array.String), rec.Column(2).(*array.String)
	require.Equal(t, []string{"0001", "0002", "0003"}, []string{vbeln.Value(0), vbeln.Value(1), vbeln.Value(2)})
	require.Equal(t, "A1", aufnr.Value(0))
	require.Equal(t, "A2", aufnr.Value(1))
	require.True(t, aufnr.IsNull(2))

	// Two keys that match one column: which value would win is not the
	// decoder's guess to make.
	_, _, err = rowsWith(t, caseInsensitive, sc, `{"VBELN":"1","vbeln":"2"}`)
	require.EqualError(t, err, `field VBELN: key "vbeln" given twice for the field (mink.json.field-matching = case-insensitive)`)
}

// Nested structs, list elements and map values follow the table's matching
// rule, and folding is Unicode simple case folding.
func TestJSONFieldMatchingNested(t *testing.T) {
	P := iceberg.PrimitiveTypes
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "Address", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 2, Name: "Zip", Type: P.String}, {ID: 3, Name: "größe", Type: P.Int32}}}},
		iceberg.NestedField{ID: 4, Name: "items", Type: &iceberg.ListType{ElementID: 5, Element: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 6, Name: "SKU", Type: P.String}}}}},
		iceberg.NestedField{ID: 7, Name: "stock", Type: &iceberg.MapType{KeyID: 8, KeyType: P.String, ValueID: 9,
			ValueType: &iceberg.StructType{FieldList: []iceberg.NestedField{{ID: 10, Name: "qty", Type: P.Int64}}}}},
		iceberg.NestedField{ID: 11, Name: "key", Type: P.String})
	// U+1E9E (capital sharp s) folds to ß, U+212A (Kelvin sign) to k.
	in := `{"ADDRESS":{"zip":"75001","GRÖẞE":3},"Items":[{"sku":"a"},{"Sku":"b"}],"STOCK":{"Paris":{"QTY":7}},"\u212Aey":"x"}`
	rec, dec, err := rowsWith(t, caseInsensitive, sc, in)
	require.NoError(t, err)
	require.Equal(t, 0, dec.Unknown())
	require.Equal(t, `{"Zip":"75001","größe":3}`, scalar(rec.Column(1)))
	require.Equal(t, `[{"SKU":"a"},{"SKU":"b"}]`, scalar(rec.Column(2)))
	require.Equal(t, `[{"key":"Paris","value":{"qty":7}}]`, scalar(rec.Column(3)), "map keys are data: never folded")
	require.Equal(t, "x", rec.Column(4).(*array.String).Value(0))

	// Exact: the same value has no matching key anywhere.
	_, dec, err = rowsWith(t, exact, sc, in)
	require.EqualError(t, err, `no key of the object matches a column (mink.json.field-matching = exact); unknown fields: "ADDRESS", "Items", "STOCK", "`+"\u212A"+`ey"`)
	require.Equal(t, 4, dec.Unknown())

	// A nested object whose keys all miss is a dead letter too, named by
	// its path; the record's other unknown fields are listed with it.
	_, dec, err = rowsWith(t, exact, sc, `{"Address":{"zip":"1"},"items":[{"SKU":"a","colour":"red"}],"key":"k"}`)
	require.EqualError(t, err, `field Address: no key of the object matches a field of the struct (mink.json.field-matching = exact); unknown fields: "Address.zip", "items.element.colour"`)
	require.Equal(t, 2, dec.Unknown())
	_, _, err = rowsWith(t, exact, sc, `{"key":"k","stock":{"Paris":{"QTY":7}}}`)
	require.ErrorContains(t, err, `field stock.value: no key of the object matches a field of the struct`)
	_, _, err = rowsWith(t, exact, sc, `{"key":"k","items":[{"SKU":"a"},{"sku":"b"}]}`)
	require.ErrorContains(t, err, `field items.element: no key of the object matches a field of the struct (mink.json.field-matching = exact); unknown fields: "items.element.sku"`)

	// Unknown fields beside matching ones are counted with their paths;
	// a field inside an unknown field is not counted again.
	_, dec, err = rowsWith(t, exact, sc, `{"Address":{"Zip":"1","zip":"2"},"items":[{"SKU":"a","n":1},{"SKU":"b","n":2}],"stock":{"x":{"qty":1,"unit":"kg"}},"key":"k","extra":{"deep":{"x":1}}}`)
	require.NoError(t, err)
	require.Equal(t, 5, dec.Unknown())
	require.Equal(t, []string{"Address.zip", "items.element.n", "items.element.n", "stock.value.unit", "extra"}, paths(dec))
}

// A schema whose names a JSON key could not tell apart is refused.
func TestJSONFieldMatchingSchemaChecks(t *testing.T) {
	P := iceberg.PrimitiveTypes
	top := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "VBELN", Type: P.String},
		iceberg.NestedField{ID: 2, Name: "vbeln", Type: P.String})
	nested := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "s", Type: &iceberg.ListType{ElementID: 2,
		Element: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 3, Name: "Kelvin", Type: P.String}, {ID: 4, Name: "\u212Aelvin", Type: P.String}}}}})
	for _, c := range []struct {
		sc  *iceberg.Schema
		err string
	}{
		{top, `field vbeln: its name and "VBELN" differ only by case: with mink.json.field-matching = case-insensitive a JSON key would match both`},
		{nested, `field s.element.` + "\u212A" + `elvin: its name and "Kelvin" differ only by case`},
	} {
		sc, err := codec.TableSchema(codec.Raw, codec.JSON, c.sc)
		require.NoError(t, err)
		_, err = codec.NewDecoder(codec.JSON, sc, exact)
		require.NoError(t, err, "exact matching tells them apart")
		_, err = codec.NewDecoder(codec.JSON, sc, caseInsensitive)
		require.ErrorContains(t, err, c.err)
	}
}

// An object with keys, none of which matches, is a dead letter; an empty
// object is not (it has no key to match); required columns do not hide
// the reason; the list of names is bounded.
func TestJSONNoMatchingKey(t *testing.T) {
	sc := nestedSchema()
	rec, dec, err := rows(t, sc, `{}`, `{"s":{}}`, `{"a":null}`)
	require.NoError(t, err)
	require.Equal(t, 0, dec.Unknown())
	require.EqualValues(t, 3, rec.NumRows())
	require.True(t, rec.Column(1).IsNull(0))

	var keys []string
	for i := range 12 {
		keys = append(keys, fmt.Sprintf(`"k%02d":%d`, i, i))
	}
	_, dec, err = rows(t, sc, "{"+strings.Join(keys, ",")+"}")
	require.EqualError(t, err, `no key of the object matches a column (mink.json.field-matching = exact); unknown fields: "k00", "k01", "k02", "k03", "k04", "k05", "k06", "k07", "k08", "k09" and 2 more`)
	require.Equal(t, 12, dec.Unknown())
	require.Len(t, dec.UnknownPaths(), 10)

	req := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.String, Required: true})
	_, _, err = rows(t, req, `{"ID":"x"}`)
	require.EqualError(t, err, `no key of the object matches a column (mink.json.field-matching = exact); unknown fields: "ID"`)

	// Another reason found first wins, and then nothing is counted.
	_, dec, err = rows(t, sc, `{"x":1,"a":"one"}`)
	require.EqualError(t, err, `field a: cannot convert string "one" to long`)
	require.Equal(t, 0, dec.Unknown())
	require.Empty(t, dec.UnknownPaths())
	// A syntax error after the unknown object: the JSON error, not the
	// unknown fields.
	_, _, err = rows(t, sc, `{"s":{"B":1},"a":}`)
	require.ErrorContains(t, err, "invalid JSON")
}

// mink.json.unknown-fields = dead-letter sends every record with an
// unknown field, at any depth, to the dead-letter table.
func TestJSONUnknownDeadLetter(t *testing.T) {
	sc := nestedSchema()
	opts := codec.JSONOptions{UnknownFields: codec.UnknownDeadLetter}
	rec, dec, err := rowsWith(t, opts, sc, `{"a":1,"s":{"b":2}}`)
	require.NoError(t, err)
	require.Equal(t, int64(1), rec.Column(1).(*array.Int64).Value(0))
	require.Equal(t, 0, dec.Unknown())
	_, dec, err = rowsWith(t, opts, sc, `{"a":1,"s":{"b":2,"zip":"x"},"w":null}`)
	require.EqualError(t, err, `unknown fields (mink.json.unknown-fields = dead-letter): "s.zip", "w"`)
	require.Equal(t, 2, dec.Unknown())
	_, _, err = rowsWith(t, codec.JSONOptions{FieldMatching: codec.MatchCaseInsensitive, UnknownFields: codec.UnknownDeadLetter}, sc, `{"A":1,"S":{"B":2}}`)
	require.NoError(t, err)
}

// nestedSchema is {a long, s {b long}}: a top-level field and a nested one.
func nestedSchema() *iceberg.Schema {
	P := iceberg.PrimitiveTypes
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "a", Type: P.Int64},
		iceberg.NestedField{ID: 2, Name: "s", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 3, Name: "b", Type: P.Int64}}}})
}
