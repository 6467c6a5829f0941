package schemas_test

import (
	"bytes"
	"context"
	"math/big"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	hamba "github.com/hamba/avro/v2"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/codec"
	"github.com/minkhq/mink/codec/wire"
	"github.com/minkhq/mink/datafile"
	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/rangefile"
	"github.com/minkhq/mink/schemas"
	"github.com/minkhq/mink/tables"
)

// Two versions of one subject: v2 renames qty to quantity (alias qty,
// widened to long) and adds priority (default 3) and a bytes decimal rate
// (default 5.00).
const (
	ordersV1 = `{"type":"record","name":"Order","namespace":"shop","fields":[{"name":"id","type":"long"},{"name":"qty","type":"int"}]}`
	ordersV2 = `{"type":"record","name":"Order","namespace":"shop","fields":[{"name":"id","type":"long"},
	 {"name":"quantity","type":"long","aliases":["qty"]},
	 {"name":"priority","type":"int","default":3},
	 {"name":"rate","type":{"type":"bytes","logicalType":"decimal","precision":5,"scale":2},"default":"\u0001\u00f4"}]}`
)

func avroRecord(t *testing.T, offset int64, id int, schema string, v map[string]any) *kgo.Record {
	t.Helper()
	s, err := hamba.ParseWithCache(schema, "", &hamba.SchemaCache{})
	require.NoError(t, err)
	b, err := hamba.Marshal(s, v)
	require.NoError(t, err)
	return &kgo.Record{Partition: 0, Offset: offset, Value: append(wire.AppendHeader(nil, id, nil), b...)}
}

// valueRows reads a data file back (arrow-go's Parquet reader) and returns
// each row's value columns (after _kafka) as JSON.
func valueRows(t *testing.T, f *datafile.File) []string {
	t.Helper()
	tbl := testkit.ReadParquet(t, f.Bytes)
	defer tbl.Release()
	rr := array.NewTableReader(tbl, -1)
	defer rr.Release()
	var out []string
	for rr.Next() {
		rec := rr.RecordBatch()
		vals := array.NewRecordBatch(rec.Schema(), rec.Columns(), rec.NumRows())
		sub, err := vals.SetColumn(0, array.MakeArrayOfNull(memory.DefaultAllocator, rec.Column(0).DataType(), int(rec.NumRows())))
		require.NoError(t, err)
		var buf bytes.Buffer
		require.NoError(t, array.RecordToJSON(sub, &buf))
		for _, l := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
			out = append(out, strings.Replace(l, `"_kafka":null,`, "", 1))
		}
	}
	return out
}

// A v1 record read with a table version that v2 made takes v2's defaults
// for the fields it lacks, and its qty fills the column v2 renamed to
// quantity (Avro spec, "Schema Resolution" and "Aliases"): whether v2
// evolved the table (created with v1) or created it.
func TestAvroDefaultsAndAliases(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.Pool(t)
	v1 := &wire.Schema{ID: 1, Type: wire.TypeAvro, Text: ordersV1}
	v2 := &wire.Schema{ID: 2, Type: wire.TypeAvro, Text: ordersV2}
	src := testkit.NewRegistry("orders-value", v1, v2)
	rate := big.NewRat(1234, 100)

	t.Run("evolved", func(t *testing.T) {
		tbl := testkit.CreateTable(t, pool, testkit.RegistryDefinition(t, tables.Definition{Namespace: "app", Name: "evolved", Topic: "orders",
			ValueFormat: "avro", Subject: "orders-value"}, v1))
		store := schemas.NewStore(pool, src)
		recs := []*kgo.Record{avroRecord(t, 0, 1, ordersV1, map[string]any{"id": int64(1), "qty": int32(5)}),
			avroRecord(t, 1, 2, ordersV2, map[string]any{"id": int64(2), "quantity": int64(1) << 40, "priority": int32(1), "rate": rate})}
		res, version, err := rangefile.Encode(ctx, store, tbl, recs, schemas.Choose)
		require.NoError(t, err)
		require.Equal(t, 1, version)
		require.Nil(t, res.DLQ)
		require.Equal(t, []string{`{"id":1,"priority":3,"quantity":5,"rate":"5"}`, `{"id":2,"priority":1,"quantity":1099511627776,"rate":"12.34"}`},
			valueRows(t, res.Data))
		v0, err := store.Version(ctx, tbl.ID, 0)
		require.NoError(t, err)
		v1s, err := store.Version(ctx, tbl.ID, 1)
		require.NoError(t, err)
		// The rename keeps the column's field id.
		require.Equal(t, fieldIDs(v0, "qty"), fieldIDs(v1s, "quantity"))
		require.Equal(t, []int{-1}, fieldIDs(v1s, "qty"))
		fields, err := store.Fields(ctx, tbl.ID, 1)
		require.NoError(t, err)
		require.Equal(t, []string{"qty"}, fields[fieldIDs(v1s, "quantity")[0]].Aliases)
		require.JSONEq(t, `3`, string(fields[fieldIDs(v1s, "priority")[0]].Default))
		// Version 0 knows of no default: its files stay as they were.
		f0, err := store.Fields(ctx, tbl.ID, 0)
		require.NoError(t, err)
		require.Empty(t, f0)
		// A second node rebuilds the same bytes from what Postgres keeps.
		again, _, err := rangefile.Encode(ctx, schemas.NewStore(pool, nil), tbl, recs, 1)
		require.NoError(t, err)
		require.Equal(t, res.Data.SHA256, again.Data.SHA256)
	})

	t.Run("created", func(t *testing.T) {
		tbl := testkit.CreateTable(t, pool, testkit.RegistryDefinition(t, tables.Definition{Namespace: "app", Name: "created", Topic: "orders",
			ValueFormat: "avro", Subject: "orders-value"}, v2))
		store := schemas.NewStore(pool, src)
		recs := []*kgo.Record{avroRecord(t, 0, 1, ordersV1, map[string]any{"id": int64(1), "qty": int32(-5)})}
		res, version, err := rangefile.Encode(ctx, store, tbl, recs, schemas.Choose)
		require.NoError(t, err)
		require.Equal(t, 0, version, "v1 fits version 0 through the alias: no new column qty")
		require.Nil(t, res.DLQ)
		require.Equal(t, []string{`{"id":1,"priority":3,"quantity":-5,"rate":"5"}`}, valueRows(t, res.Data))
		infos, err := schemas.WriterSchemas(ctx, pool, tbl.ID)
		require.NoError(t, err)
		require.Equal(t, 0, *infos[0].SchemaID)
	})
}

// A default the column cannot hold exactly makes the writer's records dead
// letters with the reason, never a wrong value.
func TestAvroDefaultRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.Pool(t)
	v1 := &wire.Schema{ID: 1, Type: wire.TypeAvro, Text: ordersV1}
	bad := &wire.Schema{ID: 2, Type: wire.TypeAvro, Text: `{"type":"record","name":"Order","namespace":"shop","fields":[{"name":"id","type":"long"},
	 {"name":"qty","type":"int"},{"name":"u","type":{"type":"string","logicalType":"uuid"},"default":"not-a-uuid"}]}`}
	src := testkit.NewRegistry("orders-value", v1, bad)
	tbl := testkit.CreateTable(t, pool, testkit.RegistryDefinition(t, tables.Definition{Namespace: "app", Name: "refused", Topic: "orders",
		ValueFormat: "avro", Subject: "orders-value"}, v1))
	store := schemas.NewStore(pool, src)
	res, _, err := rangefile.Encode(ctx, store, tbl, []*kgo.Record{avroRecord(t, 0, 2, bad.Text, map[string]any{"id": int64(1), "qty": int32(1), "u": "0a8e7f1c-2b3d-4e5f-8a9b-0c1d2e3f4a5b"})}, schemas.Choose)
	require.NoError(t, err)
	require.Nil(t, res.Data)
	require.EqualValues(t, 1, res.DLQ.Stats.RecordCount)
	infos, err := schemas.WriterSchemas(ctx, pool, tbl.ID)
	require.NoError(t, err)
	require.Equal(t, `value: schema id 2: default of field u: "not-a-uuid" is not a UUID (8-4-4-4-12 hex digits)`, infos[0].Error)
}

// FieldsByID maps a key schema's paths below the key column and a value
// schema's to the value columns, each only in its own part.
func TestFieldsByID(t *testing.T) {
	t.Parallel()
	keyType, keyPaths, err := codec.ConvertWriterFields(codec.Avro, &wire.Schema{Type: wire.TypeAvro,
		Text: `{"type":"record","name":"K","fields":[{"name":"id","type":"long"},{"name":"tier","type":"int","default":2}]}`}, nil)
	require.NoError(t, err)
	valType, valPaths, err := codec.ConvertWriterFields(codec.Avro, &wire.Schema{Type: wire.TypeAvro, Text: ordersV2}, nil)
	require.NoError(t, err)
	cols := append(codec.Columns(keyType, true), codec.Columns(valType, false)...)
	sc, _, err := schemas.Initial(codec.Avro, codec.Avro, cols)
	require.NoError(t, err)
	keys := schemas.FieldsByID(sc, codec.Avro, true, keyPaths)
	vals := schemas.FieldsByID(sc, codec.Avro, false, valPaths)
	tier, _ := sc.FindFieldByName("key.tier")
	prio, _ := sc.FindFieldByName("priority")
	rate, _ := sc.FindFieldByName("rate")
	qty, _ := sc.FindFieldByName("quantity")
	require.Len(t, keys, 1)
	require.JSONEq(t, `2`, string(keys[tier.ID].Default))
	require.Len(t, vals, 3)
	require.JSONEq(t, `3`, string(vals[prio.ID].Default))
	require.JSONEq(t, `"\u0001\u00f4"`, string(vals[rate.ID].Default))
	require.Equal(t, []string{"qty"}, vals[qty.ID].Aliases)
}

// Defaults that hold U+0000 (a bytes decimal 0.00 is "\u0000") are stored
// with their version (PostgreSQL's jsonb refuses them: the create failed
// and an evolution stalled the partition), and a range of only an older
// writer's records, built after a newer version gave a column a default,
// is built with that version and takes the default: it read null.
func TestDefaultsAfterEvolution(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.Pool(t)
	const (
		zV1 = `{"type":"record","name":"Z","namespace":"z","fields":[{"name":"id","type":"long"}]}`
		zV2 = `{"type":"record","name":"Z","namespace":"z","fields":[{"name":"id","type":"long"},
		 {"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":10,"scale":2},"default":"\u0000"},
		 {"name":"note","type":"string","default":"a\u0000b"}]}`
	)
	v1 := &wire.Schema{ID: 1, Type: wire.TypeAvro, Text: zV1}
	v2 := &wire.Schema{ID: 2, Type: wire.TypeAvro, Text: zV2}
	src := testkit.NewRegistry("z-value", v1, v2)

	tbl := testkit.CreateTable(t, pool, testkit.RegistryDefinition(t, tables.Definition{Namespace: "app", Name: "z", Topic: "z",
		ValueFormat: "avro", Subject: "z-value"}, v1))
	store := schemas.NewStore(pool, src)
	old := []*kgo.Record{avroRecord(t, 0, 1, zV1, map[string]any{"id": int64(1)})}
	res, version, err := rangefile.Encode(ctx, store, tbl, old, schemas.Choose)
	require.NoError(t, err)
	require.Equal(t, 0, version)
	require.Equal(t, []string{`{"id":1}`}, valueRows(t, res.Data))

	res, version, err = rangefile.Encode(ctx, store, tbl, []*kgo.Record{avroRecord(t, 1, 2, zV2,
		map[string]any{"id": int64(2), "amount": big.NewRat(150, 100), "note": "n"})}, schemas.Choose)
	require.NoError(t, err, "the version with a U+0000 default is stored")
	require.Equal(t, 1, version)
	require.Equal(t, []string{`{"amount":"1.5","id":2,"note":"n"}`}, valueRows(t, res.Data))

	// v1 records after the evolution: version 1, with its defaults, on this
	// node and on a node that did not evolve the table.
	later := []*kgo.Record{avroRecord(t, 2, 1, zV1, map[string]any{"id": int64(3)})}
	for _, s := range []*schemas.Store{store, schemas.NewStore(pool, src)} {
		res, version, err = rangefile.Encode(ctx, s, tbl, later, schemas.Choose)
		require.NoError(t, err)
		require.Equal(t, 1, version)
		require.Equal(t, []string{`{"amount":"0","id":3,"note":"a\u0000b"}`}, valueRows(t, res.Data))
	}
	// The file built before stays a default gap (repair's), the new one not.
	gaps, err := tables.DefaultGaps(ctx, pool, []int64{tbl.ID})
	require.NoError(t, err)
	require.Equal(t, []int{0}, gaps[tbl.ID].Versions)

	// A create from v2 stores its defaults too.
	created := testkit.CreateTable(t, pool, testkit.RegistryDefinition(t, tables.Definition{Namespace: "app", Name: "z2", Topic: "z",
		ValueFormat: "avro", Subject: "z-value"}, v2))
	res, version, err = rangefile.Encode(ctx, schemas.NewStore(pool, src), created, old, schemas.Choose)
	require.NoError(t, err)
	require.Equal(t, 0, version)
	require.Equal(t, []string{`{"amount":"0","id":1,"note":"a\u0000b"}`}, valueRows(t, res.Data))
}
