package admin_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/admin"
	"github.com/minkhq/mink/catalog"
	"github.com/minkhq/mink/codec/wire"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/schemas"
	"github.com/minkhq/mink/tables"
	"github.com/minkhq/mink/tail"
)

// A table whose records a table load committed (tail files of the table
// and of its ~dlq) before any indexer ran: the overview shows what the
// current snapshots hold, whoever committed them: each partition indexed
// up to its committed offset, the dead letters, the files, and every
// writer schema met (one of another subject among them).
func TestOverviewOfLoadedTable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	v1 := testkit.JSONSchema(1, `"id":{"type":"integer"}`, "id")
	v2 := testkit.JSONSchema(2, `"id":{"type":"integer"},"note":{"type":"string"}`, "id")
	src := testkit.NewRegistry("t-value", v1, v2)
	src.Add(testkit.JSONSchema(3, `"id":{"type":"integer"}`), true)
	f := testkit.NewFixture(t, 2, testkit.RegistryDefinition(t, tables.Definition{Namespace: "n", Name: "t", Topic: "t", ValueFormat: "json-schema"}, v1))
	store := schemas.NewStore(f.Pool, src)
	l := tail.New(f.Pool, f.Client, tail.Config{Schemas: store})

	value := func(id int, body string) string { return string(wire.AppendHeader(nil, id, nil)) + body }
	f.ProduceTo(t, 0, value(1, `{"id":1}`), value(1, `{"id":"x"}`), value(2, `{"id":2,"note":"n"}`))
	f.ProduceTo(t, 1, value(3, `{"id":3}`), value(1, `{"id":4}`))
	dlq, err := tables.DLQ(ctx, f.Pool, f.Table.ID)
	require.NoError(t, err)
	for _, id := range []int64{dlq.ID, f.Table.ID} { // as a client scanning both, dead letters first
		var loc string
		require.NoError(t, f.Pool.QueryRow(ctx, `SELECT metadata_location FROM tables WHERE id = $1`, id).Scan(&loc))
		_, err := l.LoadTable(ctx, catalog.Table{ID: id, MetadataLocation: loc})
		require.NoError(t, err)
	}

	h := admin.New(f.Pool, f.Client, admin.Config{NodeID: "n1", Schemas: store})
	o, err := h.Overview(ctx, "n.t")
	require.NoError(t, err)
	require.Len(t, o.Tables, 1)
	st := o.Tables[0]
	offsets := map[int32][2]int64{}
	for _, p := range st.Partitions {
		offsets[p.Partition] = [2]int64{p.IndexedOffset, p.CommittedOffset}
	}
	require.Equal(t, map[int32][2]int64{0: {3, 3}, 1: {2, 2}}, offsets, "indexed and committed offsets")
	require.EqualValues(t, 2, st.DeadLetters)
	require.EqualValues(t, 2, st.Files.Count, "one tail file per partition")
	type writer struct {
		role  string
		id    int
		held  bool
		error string
	}
	var ws []writer
	for _, w := range st.WriterSchemas {
		ws = append(ws, writer{w.Role, w.RegistryID, w.SchemaID != nil, w.Error})
	}
	require.ElementsMatch(t, []writer{
		{"value", 1, true, ""},
		{"value", 2, true, ""},
		{"value", 3, false, `value: schema id 3 is not a version of subject "t-value" (it is a version of "other-value")`},
	}, ws)
}
