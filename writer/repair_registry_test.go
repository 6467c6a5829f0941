package writer_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/codec/wire"
	"github.com/minkhq/mink/commit"
	"github.com/minkhq/mink/indexer"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/schemas"
	"github.com/minkhq/mink/tables"
	"github.com/minkhq/mink/writer"
)

// A new registry version makes old dead letters decodable: on a
// json-schema table that dead-letters unknown fields, records carrying a
// field the first schema lacked are dead letters; a second schema version
// adds the field (the table evolves when its first record arrives), and a
// repair moves the old records into the table, each in exactly one table.
func TestRepairAfterRegistryVersion(t *testing.T) {
	ctx := context.Background()
	v1 := testkit.JSONSchema(1, `"id":{"type":"integer"}`, "id")
	reg := testkit.NewRegistry("rj-value", v1)
	f := testkit.NewFixture(t, 1, testkit.RegistryDefinition(t, tables.Definition{Namespace: "t", Name: "rj", Topic: "rj",
		ValueFormat: "json-schema", Properties: map[string]string{"mink.json.unknown-fields": "dead-letter"}}, v1))
	pool, kc, tbl := f.Pool, f.Client, f.Table
	dlq, err := tables.DLQ(ctx, pool, tbl.ID)
	require.NoError(t, err)
	store := schemas.NewStore(pool, reg)
	ix := indexer.New(pool, kc, indexer.Config{FlushInterval: 50 * time.Millisecond, Schemas: store})
	pl := f.Take(t, tables.PartitionScope(tbl.ID, 0), "node-a")
	ixJob := testkit.Start(t, func(ctx context.Context) error { return ix.Run(ctx, pl) })
	w := writer.New(pool, kc, writer.Config{CommitInterval: 50 * time.Millisecond, Schemas: store})
	wl := f.Take(t, tables.WriterScope(tbl.ID), "node-a")
	wJob := testkit.Start(t, func(ctx context.Context) error { return w.Run(ctx, wl) })
	committed := func(end int64) func() bool {
		return func() bool {
			offs, err := commit.CommittedOffsets(ctx, pool, tbl, dlq)
			require.NoError(t, err)
			return offs[0] >= end
		}
	}
	value := func(id int, body string) string { return string(wire.AppendHeader(nil, id, nil)) + body }
	f.ProduceTo(t, 0, value(1, `{"id":1}`), value(1, `{"id":2,"note":"a"}`), value(1, `{"id":3,"note":"b"}`))
	testkit.WaitFor(t, "commit up to 3", committed(3))
	live := func(id int64) (n int64) {
		require.NoError(t, pool.QueryRow(ctx, `SELECT coalesce(sum(record_count), 0) FROM data_files
			WHERE table_id = $1 AND committed_snapshot_id IS NOT NULL AND removed_snapshot_id IS NULL`, id).Scan(&n))
		return n
	}
	require.EqualValues(t, 1, live(tbl.ID))
	require.EqualValues(t, 2, live(dlq.ID))

	// Version 2 of the subject adds note; its first record evolves the table.
	reg.Add(testkit.JSONSchema(2, `"id":{"type":"integer"},"note":{"type":"string"}`, "id"), false)
	f.ProduceTo(t, 0, value(2, `{"id":4,"note":"c"}`))
	testkit.WaitFor(t, "commit up to 4", committed(4))
	newest, err := store.Newest(ctx, tbl.ID)
	require.NoError(t, err)
	require.Equal(t, 1, newest)

	res, err := writer.Repair(ctx, pool, kc, store, tbl, writer.RepairOptions{}, nil)
	require.NoError(t, err)
	require.Equal(t, 1, res.Repaired, fmt.Sprintf("%+v", *res))
	require.EqualValues(t, 2, res.Records)
	require.EqualValues(t, 4, live(tbl.ID))
	require.EqualValues(t, 0, live(dlq.ID))
	again, err := writer.Repair(ctx, pool, kc, store, tbl, writer.RepairOptions{}, nil)
	require.NoError(t, err)
	require.Zero(t, again.Repaired)
	require.NoError(t, ixJob.Stop())
	require.NoError(t, wJob.Stop())
}
