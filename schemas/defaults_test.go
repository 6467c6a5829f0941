package schemas_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/codec/wire"
	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/rangefile"
	"github.com/minkhq/mink/schemas"
	"github.com/minkhq/mink/tables"
)

// A table's default gaps are its versions that lack a column, at any
// depth, to which the newest gives a non-null default: v2 adds
// customer.tier (default 2) inside an existing struct, v3 adds note with
// a null default. Version 0 lacks tier; versions 1 and 2 have it; note's
// null default opens no gap.
func TestDefaultGaps(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.Pool(t)
	const (
		v1 = `{"type":"record","name":"O","namespace":"g","fields":[{"name":"id","type":"long"},
		 {"name":"customer","type":{"type":"record","name":"C","fields":[{"name":"id","type":"long"}]}}]}`
		v2 = `{"type":"record","name":"O","namespace":"g","fields":[{"name":"id","type":"long"},
		 {"name":"customer","type":{"type":"record","name":"C","fields":[{"name":"id","type":"long"},{"name":"tier","type":"int","default":2}]}}]}`
		v3 = `{"type":"record","name":"O","namespace":"g","fields":[{"name":"id","type":"long"},
		 {"name":"customer","type":{"type":"record","name":"C","fields":[{"name":"id","type":"long"},{"name":"tier","type":"int","default":2}]}},
		 {"name":"note","type":["null","string"],"default":null}]}`
	)
	s1 := &wire.Schema{ID: 1, Type: wire.TypeAvro, Text: v1}
	s2 := &wire.Schema{ID: 2, Type: wire.TypeAvro, Text: v2}
	s3 := &wire.Schema{ID: 3, Type: wire.TypeAvro, Text: v3}
	src := testkit.NewRegistry("g-value", s1, s2, s3)
	tbl := testkit.CreateTable(t, pool, testkit.RegistryDefinition(t, tables.Definition{Namespace: "app", Name: "gaps", Topic: "g",
		ValueFormat: "avro", Subject: "g-value"}, s1))
	other := testkit.CreateTable(t, pool, testkit.RegistryDefinition(t, tables.Definition{Namespace: "app", Name: "nogaps", Topic: "g",
		ValueFormat: "avro", Subject: "g-value"}, s2))
	store := schemas.NewStore(pool, src)
	customer := map[string]any{"id": int64(1), "tier": int32(1)}
	for _, c := range []struct {
		tbl     *tables.Table
		s       *wire.Schema
		v       map[string]any
		version int
	}{
		{tbl, s2, map[string]any{"id": int64(1), "customer": customer}, 1},
		{tbl, s3, map[string]any{"id": int64(2), "customer": customer, "note": map[string]any{"string": "n"}}, 2},
		{other, s3, map[string]any{"id": int64(2), "customer": customer, "note": map[string]any{"string": "n"}}, 1},
	} {
		_, version, err := rangefile.Encode(ctx, store, c.tbl, []*kgo.Record{avroRecord(t, 0, c.s.ID, c.s.Text, c.v)}, schemas.Choose)
		require.NoError(t, err)
		require.Equal(t, c.version, version)
	}
	gaps, err := tables.DefaultGaps(ctx, pool, []int64{tbl.ID, other.ID})
	require.NoError(t, err)
	require.Equal(t, map[int64]tables.DefaultGap{tbl.ID: {Versions: []int{0}, Ranges: 0}}, gaps)
}
