package schemas_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/codec"
	"github.com/minkhq/mink/codec/wire"
	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/outage"
	"github.com/minkhq/mink/rangefile"
	"github.com/minkhq/mink/schemas"
	"github.com/minkhq/mink/tables"
)

func record(p int32, offset int64, id int, payload string) *kgo.Record {
	return &kgo.Record{Partition: p, Offset: offset, Value: append(wire.AppendHeader(nil, id, nil), payload...)}
}

// A json-schema table evolves with the writer schemas its records carry:
// a nested optional field makes version 1, an incompatible change and an
// unknown id are dead letters with their reason, a registry outage is an
// error (never a dead letter), and a second store finds every decision in
// Postgres without the registry.
func TestStoreEvolution(t *testing.T) {
	ctx := context.Background()
	pool, _ := pgtest.Pool(t)
	first := testkit.JSONSchema(1, `"id":{"type":"integer"},"customer":{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"]}`, "id", "customer")
	src := testkit.NewRegistry("orders-value", first, testkit.JSONSchema(2, `"id":{"type":"integer"},"customer":{"type":"object","properties":{"id":{"type":"integer"},"details":{"type":"object","properties":{"name":{"type":"string"}}}},"required":["id"]}`, "id", "customer"), testkit.JSONSchema(3, `"id":{"type":"string"}`, "id"))
	src.Add(testkit.JSONSchema(5, `"id":{"type":"integer"},"amount":{"type":"number"}`, "id"), true)
	tbl := testkit.CreateTable(t, pool, testkit.RegistryDefinition(t, tables.Definition{Namespace: "app", Name: "orders", Topic: "orders",
		ValueFormat: "json-schema"}, first))
	require.Equal(t, "orders-value", tbl.Properties[tables.PropSubject])

	store := schemas.NewStore(pool, src)
	v1 := []*kgo.Record{record(0, 0, 1, `{"id":1,"customer":{"id":7}}`)}
	res, version, err := rangefile.Encode(ctx, store, tbl, v1, -1)
	require.NoError(t, err)
	require.Equal(t, 0, version)
	require.EqualValues(t, 1, res.Data.Stats.RecordCount)
	require.Nil(t, res.DLQ)

	// Schema 2 adds customer.details{name}: version 1, and a range with
	// both writers is encoded with it.
	mixed := []*kgo.Record{record(0, 1, 1, `{"id":2,"customer":{"id":8}}`),
		record(0, 2, 2, `{"id":3,"customer":{"id":9,"details":{"name":"Ada"}}}`)}
	res, version, err = rangefile.Encode(ctx, store, tbl, mixed, -1)
	require.NoError(t, err)
	require.Equal(t, 1, version)
	require.EqualValues(t, 2, res.Data.Stats.RecordCount)
	v, err := store.Version(ctx, tbl.ID, 1)
	require.NoError(t, err)
	f, ok := v.FindFieldByName("customer.details.name")
	require.True(t, ok)
	require.False(t, f.Required)
	// The ids of version 0 stay: _kafka 1-10, id 11, customer 12, its id 13;
	// the new fields follow.
	require.Equal(t, []int{11, 12, 13, 14, 15}, fieldIDs(v, "id", "customer", "customer.id", "customer.details", "customer.details.name"))
	stored, err := tables.Get(ctx, pool, tbl.ID)
	require.NoError(t, err)
	require.Equal(t, 1, stored.Schema.ID)

	// The range of v1's record alone still needs only version 0.
	_, version, err = rangefile.Encode(ctx, store, tbl, v1, -1)
	require.NoError(t, err)
	require.Equal(t, 0, version)

	// Schema 3 turns id into a string (Iceberg cannot), id 99 is unknown.
	// Id 5 is a version of another subject: it must not reshape the table.
	bad := []*kgo.Record{record(0, 3, 3, `{"id":"x"}`), record(0, 4, 99, `{"id":4}`), {Partition: 0, Offset: 5, Value: []byte(`{"id":5}`)},
		record(0, 6, 5, `{"id":6,"amount":1.5}`)}
	res, version, err = rangefile.Encode(ctx, store, tbl, bad, -1)
	require.NoError(t, err)
	require.Equal(t, 0, version)
	require.Nil(t, res.Data)
	require.EqualValues(t, 4, res.DLQ.Stats.RecordCount)
	infos, err := schemas.WriterSchemas(ctx, pool, tbl.ID)
	require.NoError(t, err)
	require.Len(t, infos, 5)
	require.Equal(t, `value: schema id 5 is not a version of subject "orders-value" (it is a version of "other-value")`, infos[4].Error)
	require.Equal(t, 0, *infos[0].SchemaID)
	require.Equal(t, 1, *infos[1].SchemaID)
	require.Nil(t, infos[2].SchemaID)
	require.Contains(t, infos[2].Error, "value: schema id 3: field id: table has long, schema has string")
	require.Equal(t, "value: schema id 99 is not in the schema registry", infos[3].Error)

	// An outage is an error, and decides nothing.
	src.SetDown(true)
	src.Add(testkit.JSONSchema(4, `"id":{"type":"integer"},"note":{"type":"string"}`), false)
	_, _, err = rangefile.Encode(ctx, store, tbl, []*kgo.Record{record(0, 6, 4, `{"id":6,"note":"n"}`)}, -1)
	require.ErrorIs(t, err, outage.ErrUnavailable)
	infos, err = schemas.WriterSchemas(ctx, pool, tbl.ID)
	require.NoError(t, err)
	require.Len(t, infos, 5)

	// A second node's store needs no registry for what is decided, and
	// builds the same bytes.
	other := schemas.NewStore(pool, nil)
	again, version, err := rangefile.Encode(ctx, other, tbl, mixed, -1)
	require.NoError(t, err)
	require.Equal(t, 1, version)
	mine, _, err := rangefile.Encode(ctx, store, tbl, mixed, -1)
	require.NoError(t, err)
	require.Equal(t, mine.Data.SHA256, again.Data.SHA256)
	// A rebuild by version gives the same bytes too.
	byVersion, _, err := rangefile.Encode(ctx, other, tbl, mixed, 1)
	require.NoError(t, err)
	require.Equal(t, mine.Data.SHA256, byVersion.Data.SHA256)
	// An id no store has decided waits for the registry there as well.
	_, _, err = rangefile.Encode(ctx, other, tbl, []*kgo.Record{record(0, 6, 4, `{"id":6,"note":"n"}`)}, -1)
	require.ErrorIs(t, err, outage.ErrUnavailable)
}

// inferringTable creates json table app.<name> of topic <name> (one
// partition) with an inferred schema, declared so far as one optional long
// "id", and props.
func inferringTable(t *testing.T, pool *pgxpool.Pool, name string, props map[string]string) *tables.Table {
	t.Helper()
	declared := `{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":false}]}`
	tbl, err := tables.Create(context.Background(), pool, testkit.Warehouse, tables.Definition{Namespace: "app", Name: name, Topic: name,
		ValueFormat: "json", Infer: true, Schema: json.RawMessage(declared), Properties: props}, []tables.PartitionStart{{Partition: 0}})
	require.NoError(t, err)
	return tbl
}

func fieldIDs(s *iceberg.Schema, names ...string) []int {
	out := make([]int, len(names))
	for i, n := range names {
		f, ok := s.FindFieldByName(n)
		if !ok {
			out[i] = -1
			continue
		}
		out[i] = f.ID
	}
	return out
}

// Two stores deciding one new writer schema at once make one version.
func TestStoreConcurrentDecision(t *testing.T) {
	ctx := context.Background()
	pool, _ := pgtest.Pool(t)
	v1 := testkit.JSONSchema(1, `"id":{"type":"integer"}`, "id")
	src := testkit.NewRegistry("t-value", v1, testkit.JSONSchema(2, `"id":{"type":"integer"},"extra":{"type":"string"}`, "id"))
	tbl := testkit.CreateTable(t, pool, testkit.RegistryDefinition(t, tables.Definition{Namespace: "app", Name: "t", Topic: "t",
		ValueFormat: "json-schema"}, v1))
	recs := []*kgo.Record{record(0, 0, 2, `{"id":1,"extra":"e"}`)}
	var wg sync.WaitGroup
	versions := make([]int, 8)
	for i := range versions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, v, err := rangefile.Encode(ctx, schemas.NewStore(pool, src), tbl, recs, -1)
			if err != nil {
				t.Error(err)
			}
			versions[i] = v
		}()
	}
	wg.Wait()
	for _, v := range versions {
		require.Equal(t, 1, v)
	}
	all, err := tables.SchemaVersions(ctx, pool, tbl.ID, -1)
	require.NoError(t, err)
	require.Len(t, all, 2)
}

// A json table with an inferred schema takes new fields as a new version
// and builds the range again with it: no field is left uncounted or lost.
func TestStoreInferNewFields(t *testing.T) {
	ctx := context.Background()
	pool, _ := pgtest.Pool(t)
	tbl := inferringTable(t, pool, "clicks", nil)
	require.True(t, tbl.Infers())
	store := schemas.NewStore(pool, nil)
	recs := []*kgo.Record{
		{Partition: 0, Offset: 0, Value: []byte(`{"id":1}`)},
		{Partition: 0, Offset: 1, Value: []byte(`{"id":2,"page":{"path":"/a","ms":12.5},"tags":["x"]}`)},
	}
	res, version, err := rangefile.Encode(ctx, store, tbl, recs, -1)
	require.NoError(t, err)
	require.Equal(t, 1, version)
	require.Zero(t, res.Unknown)
	require.Nil(t, res.DLQ)
	require.EqualValues(t, 2, res.Data.Stats.RecordCount)
	v, err := store.Version(ctx, tbl.ID, 1)
	require.NoError(t, err)
	require.Equal(t, []int{11, 12, 13, 14, 15, 16}, fieldIDs(v, "id", "page", "page.path", "page.ms", "tags", "tags.element"))
	ms, _ := v.FindFieldByName("page.ms")
	require.Equal(t, iceberg.PrimitiveTypes.Float64, ms.Type)
	// A record of known fields only: the newest version, no new one.
	tbl, err = tables.Get(ctx, pool, tbl.ID)
	require.NoError(t, err)
	_, version, err = rangefile.Encode(ctx, store, tbl, recs[:1], -1)
	require.NoError(t, err)
	require.Equal(t, 1, version)
	all, err := tables.SchemaVersions(ctx, pool, tbl.ID, -1)
	require.NoError(t, err)
	require.Len(t, all, 2)
}

// One record whose kinds conflict with the others' (a struct field given
// as a string) keeps no one's new fields out of an inferred schema.
func TestStoreInferAroundConflict(t *testing.T) {
	ctx := context.Background()
	pool, _ := pgtest.Pool(t)
	declared := `{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":false},` +
		`{"id":2,"name":"n","type":{"type":"struct","fields":[{"id":3,"name":"a","type":"long","required":false}]},"required":false}]}`
	tbl, err := tables.Create(ctx, pool, testkit.Warehouse, tables.Definition{Namespace: "app", Name: "inf", Topic: "inf",
		ValueFormat: "json", Infer: true, Schema: json.RawMessage(declared)}, []tables.PartitionStart{{Partition: 0}})
	require.NoError(t, err)
	recs := []*kgo.Record{
		{Partition: 0, Offset: 0, Value: []byte(`{"id":2,"c":"x","n":{"a":2,"b":1}}`)},
		{Partition: 0, Offset: 1, Value: []byte(`{"id":3,"n":"oops"}`)},
	}
	res, version, err := rangefile.Encode(ctx, schemas.NewStore(pool, nil), tbl, recs, schemas.Choose)
	require.NoError(t, err)
	require.Equal(t, 1, version)
	require.EqualValues(t, 1, res.Data.Stats.RecordCount)
	require.EqualValues(t, 1, res.DLQ.Stats.RecordCount)
	require.Zero(t, res.Unknown)
	v, err := schemas.NewStore(pool, nil).Version(ctx, tbl.ID, 1)
	require.NoError(t, err)
	require.Equal(t, []int{11, 12, 13, 14, 15}, fieldIDs(v, "id", "n", "n.a", "n.b", "c"))
}

// A JSON Schema that refines "number" to "integer" (or gives a string
// column a number) needs no new version: the JSON decoder fills the
// table's column from such values exactly or dead-letters the value.
func TestStoreJSONSchemaRefinement(t *testing.T) {
	ctx := context.Background()
	pool, _ := pgtest.Pool(t)
	v1 := testkit.JSONSchema(1, `"id":{"type":"integer"},"score":{"type":"number"},"code":{"type":"string"}`, "id")
	src := testkit.NewRegistry("t-value", v1, testkit.JSONSchema(2, `"id":{"type":"integer"},"score":{"type":"integer"},"code":{"type":"integer"}`, "id"))
	tbl := testkit.CreateTable(t, pool, testkit.RegistryDefinition(t, tables.Definition{Namespace: "app", Name: "t", Topic: "t",
		ValueFormat: "json-schema"}, v1))
	res, version, err := rangefile.Encode(ctx, schemas.NewStore(pool, src), tbl, []*kgo.Record{record(0, 0, 2, `{"id":1,"score":3,"code":7}`)}, schemas.Choose)
	require.NoError(t, err)
	require.Equal(t, 0, version)
	require.Nil(t, res.DLQ)
	require.EqualValues(t, 1, res.Data.Stats.RecordCount)
}

// Inference never grows a schema past codec.MaxSchemaJSON: the fields of a
// record that would stay out (counted as unknown), the table keeps
// committing.
func TestStoreInferBounded(t *testing.T) {
	ctx := context.Background()
	pool, _ := pgtest.Pool(t)
	tbl := inferringTable(t, pool, "wide", nil)
	var b strings.Builder
	b.WriteString(`{"id":1`)
	for i := range 50000 {
		fmt.Fprintf(&b, `,"k%d":"v"`, i)
	}
	b.WriteString(`}`)
	res, version, err := rangefile.Encode(ctx, schemas.NewStore(pool, nil), tbl, []*kgo.Record{{Partition: 0, Offset: 0, Value: []byte(b.String())}}, schemas.Choose)
	require.NoError(t, err)
	require.Equal(t, 0, version)
	require.EqualValues(t, 50000, res.Unknown)
	require.EqualValues(t, 1, res.Data.Stats.RecordCount)
}

// TestSpecAlternatingWriters: a range whose records change writer schema
// from one record to the next (ids 1, 2, 1, 1, 2, 2, 1) gets every writer
// they name, however the runs of equal headers fall: no record goes to the
// dead-letter table for want of its writer.
func TestSpecAlternatingWriters(t *testing.T) {
	ctx := context.Background()
	pool, _ := pgtest.Pool(t)
	first := testkit.JSONSchema(1, `"id":{"type":"integer"}`, "id")
	src := testkit.NewRegistry("t-value", first, testkit.JSONSchema(2, `"id":{"type":"integer"},"name":{"type":"string"}`, "id"))
	tbl := testkit.CreateTable(t, pool, testkit.RegistryDefinition(t, tables.Definition{Namespace: "app", Name: "t", Topic: "t",
		ValueFormat: "json-schema"}, first))
	store := schemas.NewStore(pool, src)
	var recs []*kgo.Record
	for i, id := range []int{1, 2, 1, 1, 2, 2, 1} {
		payload := fmt.Sprintf(`{"id":%d}`, i)
		if id == 2 {
			payload = fmt.Sprintf(`{"id":%d,"name":"n%d"}`, i, i)
		}
		recs = append(recs, record(0, int64(i), id, payload))
	}
	res, version, err := rangefile.Encode(ctx, store, tbl, recs, -1)
	require.NoError(t, err)
	require.Equal(t, 1, version)
	require.Nil(t, res.DLQ)
	require.EqualValues(t, len(recs), res.Data.Stats.RecordCount)
}

// A JSON key holding U+0000 cannot name a column (PostgreSQL's jsonb, where
// schemas are kept, holds no U+0000): inference leaves it out, as an
// unknown field counted, and still adds the record's other new fields.
// Before, the new schema version failed in the database at every build of
// the range, and the table's indexing stopped there (found by fuzzing).
func TestStoreInferNULKey(t *testing.T) {
	ctx := context.Background()
	pool, _ := pgtest.Pool(t)
	tbl := inferringTable(t, pool, "clicks", nil)
	store := schemas.NewStore(pool, nil)
	recs := []*kgo.Record{{Partition: 0, Offset: 0, Value: []byte(`{"id":1,"a\u0000b":2,"s":{"\u0000":1,"ok":true}}`)}}
	res, version, err := rangefile.Encode(ctx, store, tbl, recs, -1)
	require.NoError(t, err)
	require.Equal(t, 1, version)
	require.EqualValues(t, 2, res.Unknown)
	require.Nil(t, res.DLQ)
	v, err := store.Version(ctx, tbl.ID, 1)
	require.NoError(t, err)
	require.Equal(t, []int{11, 12, 13}, fieldIDs(v, "id", "s", "s.ok"))
	require.Len(t, v.Fields(), 3, "_kafka, id, s")
}

// An inferred version the decoder would refuse (with case-insensitive
// matching, new fields "b" and "B") is not added: every build with it
// would fail, and the table's indexing would stop (found by fuzzing). The
// fields stay unknown, counted; the records are stored.
func TestStoreInferFoldedNames(t *testing.T) {
	ctx := context.Background()
	pool, _ := pgtest.Pool(t)
	tbl := inferringTable(t, pool, "clicks", map[string]string{codec.PropFieldMatching: string(codec.MatchCaseInsensitive)})
	store := schemas.NewStore(pool, nil)
	recs := []*kgo.Record{{Partition: 0, Offset: 0, Value: []byte(`{"ID":1,"b":1,"B":2}`)}}
	res, version, err := rangefile.Encode(ctx, store, tbl, recs, -1)
	require.NoError(t, err)
	require.Equal(t, 0, version)
	require.EqualValues(t, 2, res.Unknown)
	require.Nil(t, res.DLQ)
	require.EqualValues(t, 1, res.Data.Stats.RecordCount)
	all, err := tables.SchemaVersions(ctx, pool, tbl.ID, -1)
	require.NoError(t, err)
	require.Len(t, all, 1)

	// A key that spells a column in another case is that column, not a
	// new field: "ID" is "id", "S.X" is "s.x"; "c" and "s.y" are new.
	tbl, err = tables.Get(ctx, pool, tbl.ID)
	require.NoError(t, err)
	_, version, err = rangefile.Encode(ctx, store, tbl, []*kgo.Record{{Partition: 0, Offset: 1, Value: []byte(`{"ID":2,"s":{"x":1}}`)}}, -1)
	require.NoError(t, err)
	require.Equal(t, 1, version)
	tbl, err = tables.Get(ctx, pool, tbl.ID)
	require.NoError(t, err)
	res, version, err = rangefile.Encode(ctx, store, tbl, []*kgo.Record{{Partition: 0, Offset: 2, Value: []byte(`{"ID":3,"c":true,"S":{"X":2,"y":"z"}}`)}}, -1)
	require.NoError(t, err)
	require.Equal(t, 2, version)
	require.Zero(t, res.Unknown)
	v, err := store.Version(ctx, tbl.ID, 2)
	require.NoError(t, err)
	require.Equal(t, []int{11, 12, 13, 14, 15}, fieldIDs(v, "id", "s", "s.x", "s.y", "c"))
	require.Len(t, v.Fields(), 4, "_kafka, id, s, c")
}

// Keys inference cannot make columns of (an empty key; _kafka, reserved at
// the top level) never make a build fail: their fields stay unknown,
// counted, and the records are stored (found by FuzzInferBuild: a range
// with {"":{"":0}} failed at every build).
func TestStoreInferInvalidNames(t *testing.T) {
	ctx := context.Background()
	pool, _ := pgtest.Pool(t)
	tbl := inferringTable(t, pool, "clicks", nil)
	store := schemas.NewStore(pool, nil)
	res, version, err := rangefile.Encode(ctx, store, tbl, []*kgo.Record{{Partition: 0, Offset: 0, Value: []byte(`{"id":1,"":{"":0},"x":{"":1,"y":2}}`)}}, -1)
	require.NoError(t, err)
	require.Equal(t, 1, version)
	require.EqualValues(t, 2, res.Unknown, `"" and x.""`)
	v, err := store.Version(ctx, tbl.ID, 1)
	require.NoError(t, err)
	require.Equal(t, []int{11, 12, 13}, fieldIDs(v, "id", "x", "x.y"))

	tbl, err = tables.Get(ctx, pool, tbl.ID)
	require.NoError(t, err)
	res, version, err = rangefile.Encode(ctx, store, tbl, []*kgo.Record{{Partition: 0, Offset: 1, Value: []byte(`{"id":2,"_kafka":{"a":1},"z":true}`)}}, -1)
	require.NoError(t, err)
	require.Equal(t, 1, version, "_kafka keeps the record's new fields out")
	require.EqualValues(t, 2, res.Unknown)
	require.EqualValues(t, 1, res.Data.Stats.RecordCount)
}
