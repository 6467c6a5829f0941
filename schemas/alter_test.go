package schemas_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/codec"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/schemas"
	"github.com/minkhq/mink/tables"
)

func parseSchema(t *testing.T, s string) *iceberg.Schema {
	t.Helper()
	sc := new(iceberg.Schema)
	require.NoError(t, json.Unmarshal([]byte(s), sc))
	return sc
}

// Alter evolves a json table's value columns by Iceberg's rules into a new
// version that new builds use; the same schema again changes nothing; a
// change Iceberg does not allow is refused with the evolution error; only
// json tables take it.
func TestAlter(t *testing.T) {
	ctx := context.Background()
	f := testkit.NewFixture(t, 1, tables.Definition{Namespace: "t", Name: "a", Topic: "a", ValueFormat: "json",
		Schema: json.RawMessage(`{"type":"struct","fields":[
			{"id":1,"name":"id","type":"long","required":true},
			{"id":2,"name":"customer","type":{"type":"struct","fields":[{"id":3,"name":"name","type":"string","required":false}]},"required":false}]}`)})
	st := schemas.NewStore(f.Pool, nil)
	tbl := f.Table
	require.Equal(t, 0, tbl.Schema.ID)

	// A new top-level field and a nested one, declared required: both are
	// added optional, with the next field ids; id is dropped from the
	// declaration, so it becomes optional and keeps its id.
	next, changed, err := st.Alter(ctx, tbl, parseSchema(t, `{"type":"struct","fields":[
		{"id":1,"name":"customer","type":{"type":"struct","fields":[
			{"id":2,"name":"name","type":"string","required":false},
			{"id":3,"name":"tier","type":"int","required":true}]},"required":false},
		{"id":4,"name":"note","type":"string","required":true}]}`))
	require.NoError(t, err)
	require.True(t, changed)
	require.Equal(t, 1, next.ID)
	var got []string
	for _, fld := range schemas.Columns(next) {
		got = append(got, fld.String())
	}
	require.Equal(t, []string{
		"11: id: optional long",
		"12: customer: optional struct<13: name: optional string, 14: tier: optional int>",
		"15: note: optional string",
	}, got)
	vs, err := st.Versions(ctx, tbl.ID, -1)
	require.NoError(t, err)
	require.Len(t, vs, 2)
	var reason string
	require.NoError(t, f.Pool.QueryRow(ctx, `SELECT reason FROM table_schemas WHERE table_id = $1 AND schema_id = 1`, tbl.ID).Scan(&reason))
	require.Equal(t, "alter", reason)

	// Builds use the table's newest version (Newest tells a holder of a
	// stale copy that it must read the table again).
	newest, err := st.Newest(ctx, tbl.ID)
	require.NoError(t, err)
	require.Equal(t, 1, newest)
	fresh, err := tables.Get(ctx, f.Pool, tbl.ID)
	require.NoError(t, err)
	spec, err := st.Spec(ctx, fresh, nil, -1)
	require.NoError(t, err)
	require.Equal(t, 1, spec.Schema.ID)
	spec, err = st.Spec(ctx, tbl, nil, 0)
	require.NoError(t, err)
	require.Equal(t, 0, spec.Schema.ID, "a rebuild uses its file's version")

	// The same declaration again: nothing to do.
	same, changed, err := st.Alter(ctx, tbl, parseSchema(t, `{"type":"struct","fields":[
		{"id":1,"name":"note","type":"string","required":false}]}`))
	require.NoError(t, err)
	require.False(t, changed)
	require.Equal(t, 1, same.ID)

	// Widening is allowed; long→string is not.
	_, _, err = st.Alter(ctx, tbl, parseSchema(t, `{"type":"struct","fields":[
		{"id":1,"name":"id","type":"string","required":false}]}`))
	require.True(t, errors.Is(err, tables.ErrInvalid), "%v", err)
	var inc *schemas.IncompatibleError
	require.True(t, errors.As(err, &inc))
	require.EqualError(t, err, "invalid table definition: field id: table has long, schema has string; "+schemas.ReasonPromotion)
	next, changed, err = st.Alter(ctx, tbl, parseSchema(t, `{"type":"struct","fields":[
		{"id":1,"name":"customer","type":{"type":"struct","fields":[{"id":2,"name":"tier","type":"long","required":false}]},"required":false}]}`))
	require.NoError(t, err)
	require.True(t, changed)
	require.Equal(t, 2, next.ID)
	tier, ok := next.FindFieldByName("customer.tier")
	require.True(t, ok)
	require.Equal(t, 14, tier.ID)
	require.Equal(t, iceberg.PrimitiveTypes.Int64, tier.Type)

	// Bad declarations and other formats.
	for _, c := range []struct {
		t      *tables.Table
		schema string
		want   string
	}{
		{&tables.Table{Namespace: "t", Name: "b", ValueFormat: codec.Avro}, `{"type":"struct","fields":[{"id":1,"name":"x","type":"int","required":false}]}`,
			"invalid table definition: the registry defines the schema of avro tables; register a new version instead"},
		{&tables.Table{Namespace: "t", Name: "b", ValueFormat: codec.Raw}, `{"type":"struct","fields":[{"id":1,"name":"x","type":"int","required":false}]}`,
			"invalid table definition: raw tables have one fixed value column; only json tables take a declared schema"},
		{tbl, `{"type":"struct","fields":[{"id":1,"name":"_kafka","type":"int","required":false}]}`,
			"invalid table definition: schema: field _kafka: the name is reserved for Kafka metadata"},
		{tbl, `{"type":"struct","fields":[]}`, "invalid table definition: schema: table schema: no column besides _kafka"},
	} {
		_, _, err := st.Alter(ctx, c.t, parseSchema(t, c.schema))
		require.EqualError(t, err, c.want)
	}
	vs, err = st.Versions(ctx, tbl.ID, -1)
	require.NoError(t, err)
	require.Len(t, vs, 3, "refused alters store nothing")
}
