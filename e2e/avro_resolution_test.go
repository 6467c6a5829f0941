package e2e

import (
	"context"
	"math/big"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/hamba/avro/v2"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/minkhq/mink/codec/wire"
	"github.com/minkhq/mink/internal/clustertest"
)

// TestAvroResolution (docs/formats.md, Avro "Defaults and aliases",
// "Recursive records"): v2 of a subject renames qty to quantity (alias
// qty) and adds priority (default 3) and a bytes decimal rate (default
// 5.00); the table is made from v2, and v1 records read back through
// iceberg-go with priority 3, rate 5.00 and their qty in quantity. A
// recursive record (a linked list) is served, its recursive part as Avro
// JSON text, whole.
func TestAvroResolution(t *testing.T) {
	env := startEnv(t, 1)
	ctx := context.Background()
	url := env.Nodes[0].URL()
	reg := registryClient(t, env)
	const v1 = `{"type":"record","name":"Order","namespace":"e2e","fields":[{"name":"id","type":"long"},{"name":"qty","type":"int"}]}`
	const v2 = `{"type":"record","name":"Order","namespace":"e2e","fields":[{"name":"id","type":"long"},
 {"name":"quantity","type":"long","aliases":["qty"]},
 {"name":"priority","type":"int","default":3},
 {"name":"rate","type":{"type":"bytes","logicalType":"decimal","precision":5,"scale":2},"default":"\u0001\u00f4"}]}`
	const list = `{"type":"record","name":"Node","namespace":"e2e","fields":[{"name":"value","type":"int"},{"name":"next","type":["null","Node"]}]}`
	id1 := register(t, reg, "res-value", sr.TypeAvro, v1)
	id2 := register(t, reg, "res-value", sr.TypeAvro, v2)
	idList := register(t, reg, "list-value", sr.TypeAvro, list)
	createTable(t, env, 1, map[string]any{"namespace": "test", "name": "res", "topic": "res", "value_format": "avro"})
	createTable(t, env, 1, map[string]any{"namespace": "test", "name": "list", "topic": "list", "value_format": "avro"})
	enc := func(text string, id int, v map[string]any) []byte {
		s, err := avro.Parse(text)
		require.NoError(t, err)
		b, err := avro.Marshal(s, v)
		require.NoError(t, err)
		return append(wire.AppendHeader(nil, id, nil), b...)
	}
	produceValues(t, env, "res", map[int32][][]byte{0: {
		enc(v1, id1, map[string]any{"id": int64(1), "qty": int32(7)}),
		enc(v2, id2, map[string]any{"id": int64(2), "quantity": int64(1) << 40, "priority": int32(1), "rate": big.NewRat(-1234, 100)}),
		enc(v1, id1, map[string]any{"id": int64(3), "qty": int32(-2)}),
	}})
	node := func(v int, next map[string]any) map[string]any {
		if next == nil {
			return map[string]any{"value": v, "next": nil}
		}
		return map[string]any{"value": v, "next": map[string]any{"e2e.Node": next}}
	}
	produceValues(t, env, "list", map[int32][][]byte{0: {
		enc(list, idList, node(1, node(2, node(3, nil)))),
		enc(list, idList, node(4, nil)),
	}})

	clustertest.WaitCaughtUp(t, url, "test.res")
	require.Zero(t, clustertest.ScanAll(t, url, "test.res~dlq").NumRows())
	got := map[int64]map[string]any{}
	eachRow(t, clustertest.ScanAll(t, url, "test.res"), func(row map[string]any) {
		delete(row, "_kafka")
		got[row["id"].(int64)] = row
	})
	require.Equal(t, map[int64]map[string]any{
		1: {"id": int64(1), "quantity": int64(7), "priority": int64(3), "rate": "5.00"},
		2: {"id": int64(2), "quantity": int64(1) << 40, "priority": int64(1), "rate": "-12.34"},
		3: {"id": int64(3), "quantity": int64(-2), "priority": int64(3), "rate": "5.00"},
	}, got)
	cat, err := rest.NewCatalog(ctx, "mink", url)
	require.NoError(t, err)
	tbl, err := cat.LoadTable(ctx, table.Identifier{"test", "res"})
	require.NoError(t, err)
	cur := tbl.Metadata().CurrentSchema()
	require.Equal(t, 0, cur.ID, "v1 fits the table made from v2: no column qty")
	f, ok := cur.FindFieldByName("priority")
	require.True(t, ok)
	require.True(t, f.Required)
	require.Nil(t, f.InitialDefault, "no v3 default in a v2 table's metadata")

	clustertest.WaitCaughtUp(t, url, "test.list")
	require.Zero(t, clustertest.ScanAll(t, url, "test.list~dlq").NumRows())
	rows := map[int64]any{}
	eachRow(t, clustertest.ScanAll(t, url, "test.list"), func(row map[string]any) {
		rows[row["value"].(int64)] = row["next"]
	})
	require.Equal(t, map[int64]any{
		1: `{"value":2,"next":{"e2e.Node":{"value":3,"next":null}}}`,
		4: nil,
	}, rows)
	lt, err := cat.LoadTable(ctx, table.Identifier{"test", "list"})
	require.NoError(t, err)
	next, ok := lt.Metadata().CurrentSchema().FindFieldByName("next")
	require.True(t, ok)
	require.True(t, next.Type.Equals(iceberg.PrimitiveTypes.String))
}
