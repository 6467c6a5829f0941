package schemas_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/minkhq/mink/codec"
	"github.com/minkhq/mink/codec/wire"
	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/rangefile"
	"github.com/minkhq/mink/schemas"
	"github.com/minkhq/mink/tables"
)

// Two messages of one schema with a field in common: the columns of one
// could take the values of the other, and nothing would tell them apart.
const shopProto = `syntax = "proto3"; package shop;
message Order { int64 id = 1; string note = 2; }
message Refund { int64 id = 1; string note = 2; int64 amount = 3; }`

// pbRecord is a record of schema id at message indexes whose payload sets
// field 1 to id.
func pbRecord(offset int64, schemaID int, indexes []int, id uint64) *kgo.Record {
	if len(indexes) == 0 {
		indexes = []int{0} // nil would write no indexes at all
	}
	b := wire.AppendHeader(nil, schemaID, indexes)
	b = protowire.AppendVarint(protowire.AppendTag(b, 1, protowire.VarintType), id)
	return &kgo.Record{Partition: 0, Offset: offset, Value: b}
}

// pbDefinition is the protobuf table name of the columns of message at
// indexes of s, holding message (empty: the property is left unset, as
// for tables created before it).
func pbDefinition(t *testing.T, name string, s *wire.Schema, indexes []int, message string) tables.Definition {
	conv, err := codec.ConvertWriter(codec.Protobuf, s, indexes)
	require.NoError(t, err)
	sc, _, err := schemas.Initial(codec.Raw, codec.Protobuf, codec.Columns(conv, false))
	require.NoError(t, err)
	b, err := json.Marshal(iceberg.NewSchema(0, schemas.Columns(sc)...))
	require.NoError(t, err)
	return tables.Definition{Namespace: "shop", Name: name, Topic: name, ValueFormat: "protobuf", Subject: "orders-value",
		Message: message, Schema: b}
}

// A record whose message indexes select another message than the table's
// is a dead letter naming both, never a row of the table's columns; the
// table holds the message its create chose (the first by default, or one
// named), and tables without the property hold the writer's first.
func TestStoreOtherMessage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.Pool(t)
	s := &wire.Schema{ID: 1, Type: wire.TypeProtobuf, Text: shopProto}
	src := testkit.NewRegistry("orders-value", s)
	store := schemas.NewStore(pool, src)
	for _, tc := range []struct {
		table   string
		indexes []int // of the table's message
		message string
		other   []int
		reason  string
	}{
		{"orders", nil, "shop.Order", []int{1},
			"value: schema id 1: the message indexes [1] select message shop.Refund, but the table holds shop.Order (one message type per table)"},
		{"legacy", nil, "", []int{1},
			"value: schema id 1: the message indexes [1] select message shop.Refund, but the table holds shop.Order (one message type per table)"},
		{"refunds", []int{1}, "shop.Refund", nil,
			"value: schema id 1: the message indexes [0] select message shop.Order, but the table holds shop.Refund (one message type per table)"},
	} {
		t.Run(tc.table, func(t *testing.T) {
			tbl := testkit.CreateTable(t, pool, pbDefinition(t, tc.table, s, tc.indexes, tc.message))
			require.Equal(t, tc.message, tbl.Properties[tables.PropMessage])
			res, version, err := rangefile.Encode(ctx, store, tbl, []*kgo.Record{
				pbRecord(0, 1, tc.indexes, 7), pbRecord(1, 1, tc.other, 8), pbRecord(2, 1, tc.indexes, 9)}, -1)
			require.NoError(t, err)
			require.Equal(t, 0, version, "the other message must not evolve the table")
			require.EqualValues(t, 2, res.Data.Stats.RecordCount)
			require.NotNil(t, res.DLQ)
			require.EqualValues(t, 1, res.DLQ.Stats.RecordCount)
			infos, err := schemas.WriterSchemas(ctx, pool, tbl.ID)
			require.NoError(t, err)
			require.Len(t, infos, 2)
			require.Equal(t, 0, *infos[0].SchemaID)
			require.Nil(t, infos[1].SchemaID)
			require.Equal(t, codec.IndexesString(tc.other), infos[1].MessageIndexes)
			require.Equal(t, tc.reason, infos[1].Error)
		})
	}
}
