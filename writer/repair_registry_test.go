package writer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/codec"
	"github.com/minkhq/mink/codec/wire"
	"github.com/minkhq/mink/commit"
	"github.com/minkhq/mink/indexer"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/schemas"
	"github.com/minkhq/mink/tables"
	"github.com/minkhq/mink/writer"
)

// memRegistry is a schema registry in memory whose subject is "rj-value".
type memRegistry struct {
	mu   sync.Mutex
	byID map[int]*wire.Schema
}

func (m *memRegistry) SchemaByID(_ context.Context, id int) (*wire.Schema, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.byID[id]; ok {
		return s, nil
	}
	return nil, schemas.ErrNotFound
}

func (m *memRegistry) Latest(ctx context.Context, _ string) (*wire.Schema, error) {
	return m.SchemaByID(ctx, 1)
}

func (m *memRegistry) Subjects(ctx context.Context, id int) ([]string, error) {
	if _, err := m.SchemaByID(ctx, id); err != nil {
		return nil, err
	}
	return []string{"rj-value"}, nil
}

// A new registry version makes old dead letters decodable: on a
// json-schema table that dead-letters unknown fields, records carrying a
// field the first schema lacked are dead letters; a second schema version
// adds the field (the table evolves when its first record arrives), and a
// repair moves the old records into the table, each in exactly one table.
func TestRepairAfterRegistryVersion(t *testing.T) {
	ctx := context.Background()
	v1 := &wire.Schema{ID: 1, Type: wire.TypeJSON, Text: `{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"]}`}
	reg := &memRegistry{byID: map[int]*wire.Schema{1: v1}}
	conv, err := codec.ConvertWriter(codec.JSONSchema, v1, nil)
	require.NoError(t, err)
	sc, _, err := schemas.Initial(codec.Raw, codec.JSONSchema, codec.Columns(conv, false))
	require.NoError(t, err)
	declared, err := json.Marshal(iceberg.NewSchema(0, schemas.Columns(sc)...))
	require.NoError(t, err)
	f := testkit.NewFixture(t, 1, tables.Definition{Namespace: "t", Name: "rj", Topic: "rj", ValueFormat: "json-schema",
		Schema: declared, Properties: map[string]string{"mink.json.unknown-fields": "dead-letter"}})
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
	reg.mu.Lock()
	reg.byID[2] = &wire.Schema{ID: 2, Type: wire.TypeJSON,
		Text: `{"type":"object","properties":{"id":{"type":"integer"},"note":{"type":"string"}},"required":["id"]}`}
	reg.mu.Unlock()
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
