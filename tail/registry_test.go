package tail_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/codec/wire"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/schemas"
	"github.com/minkhq/mink/tables"
	"github.com/minkhq/mink/tail"
)

// While the registry is down, a load takes a partition up to its first
// record whose writer schema Mink has not stored, and answers; nothing
// is dead-lettered; the next load after the registry is back takes the rest.
func TestLoadDuringRegistryOutage(t *testing.T) {
	ctx := context.Background()
	v1 := testkit.JSONSchema(1, `"id":{"type":"integer"}`, "id")
	src := testkit.NewRegistry("t-value", v1, testkit.JSONSchema(2, `"id":{"type":"integer"},"note":{"type":"string"}`, "id"))
	f := testkit.NewFixture(t, 1, testkit.RegistryDefinition(t, tables.Definition{Namespace: "n", Name: "t", Topic: "t", ValueFormat: "json-schema"}, v1))
	l := tail.New(f.Pool, f.Client, tail.Config{Schemas: schemas.NewStore(f.Pool, src)})

	value := func(id int, body string) string { return string(wire.AppendHeader(nil, id, nil)) + body }
	f.ProduceTo(t, 0, value(1, `{"id":1}`), value(1, `{"id":2}`))
	require.EqualValues(t, 2, totalRecords(t, loadTable(t, f, l)))

	// Down: records of the known id 1 go on; the first of id 2 stops the load there.
	src.SetDown(true)
	f.ProduceTo(t, 0, value(1, `{"id":3}`), value(2, `{"id":4,"note":"n"}`), value(1, `{"id":5}`))
	md := loadTable(t, f, l)
	require.EqualValues(t, 3, totalRecords(t, md))
	var dead int64
	require.NoError(t, f.Pool.QueryRow(ctx, `SELECT count(*) FROM tail_files tf JOIN tables t ON t.id = tf.table_id WHERE t.dlq_of IS NOT NULL`).Scan(&dead))
	require.Zero(t, dead)

	// Back: the rest, under the evolved schema.
	src.SetDown(false)
	md = loadTable(t, f, l)
	require.EqualValues(t, 5, totalRecords(t, md))
	require.Equal(t, 1, md.CurrentSchema().ID)
	_, ok := md.CurrentSchema().FindFieldByName("note")
	require.True(t, ok)
}

func totalRecords(t *testing.T, md table.Metadata) int64 {
	t.Helper()
	s := md.CurrentSnapshot()
	require.NotNil(t, s)
	n, err := strconv.ParseInt(s.Summary.Properties["total-records"], 10, 64)
	require.NoError(t, err)
	return n
}
