package writer_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	hamba "github.com/hamba/avro/v2"
	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/codec/wire"
	"github.com/minkhq/mink/commit"
	"github.com/minkhq/mink/indexer"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/rangefile"
	"github.com/minkhq/mink/schemas"
	"github.com/minkhq/mink/tables"
	"github.com/minkhq/mink/writer"
)

// Two versions of one subject: v2 adds priority (default 3) and a bytes
// decimal rate (default 5.00).
const (
	defaultsV1 = `{"type":"record","name":"Order","namespace":"shop","fields":[{"name":"id","type":"long"}]}`
	defaultsV2 = `{"type":"record","name":"Order","namespace":"shop","fields":[{"name":"id","type":"long"},
	 {"name":"priority","type":"int","default":3},
	 {"name":"rate","type":{"type":"bytes","logicalType":"decimal","precision":5,"scale":2},"default":"\u0001\u00f4"}]}`
)

// A table made from v1 whose v1 ranges were committed before v2 (which
// adds priority with default 3 and rate with default 5.00) made version
// 1: those files, encoded with version 0, read null there (Iceberg v2 has
// no initial-default). The new version logs it once; a repair rebuilds
// them with version 1, whose decoder fills the defaults (Avro spec 1.12,
// "Schema Resolution"), in an overwrite; a second repair finds nothing.
func TestRepairDefaults(t *testing.T) {
	ctx := context.Background()
	v1 := &wire.Schema{ID: 1, Type: wire.TypeAvro, Text: defaultsV1}
	v2 := &wire.Schema{ID: 2, Type: wire.TypeAvro, Text: defaultsV2}
	reg := testkit.NewRegistry("rd-value", v1)
	f := testkit.NewFixture(t, 1, testkit.RegistryDefinition(t, tables.Definition{Namespace: "t", Name: "rd", Topic: "rd",
		ValueFormat: "avro", Subject: "rd-value"}, v1))
	pool, kc, tbl := f.Pool, f.Client, f.Table
	dlq, err := tables.DLQ(ctx, pool, tbl.ID)
	require.NoError(t, err)
	var logged bytes.Buffer
	store := schemas.NewStore(pool, reg)
	store.SetLog(slog.New(slog.NewTextHandler(&logged, nil)))
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
	value := func(s *wire.Schema, v map[string]any) string {
		sc, err := hamba.ParseWithCache(s.Text, "", &hamba.SchemaCache{})
		require.NoError(t, err)
		b, err := hamba.Marshal(sc, v)
		require.NoError(t, err)
		return string(wire.AppendHeader(nil, s.ID, nil)) + string(b)
	}
	f.ProduceTo(t, 0, value(v1, map[string]any{"id": int64(1)}), value(v1, map[string]any{"id": int64(2)}))
	testkit.WaitFor(t, "commit up to 2", committed(2))

	// v2 evolves the table at its first record.
	reg.Add(v2, false)
	f.ProduceTo(t, 0, value(v2, map[string]any{"id": int64(3), "priority": int32(1), "rate": []byte{0x04, 0xd2}}))
	testkit.WaitFor(t, "commit up to 3", committed(3))
	require.NoError(t, ixJob.Stop())
	require.NoError(t, wJob.Stop())

	type liveFile struct {
		Start, End int64
		Schema     int
		Records    int64
	}
	live := func(id int64) []liveFile {
		rows, err := pool.Query(ctx, `SELECT start_offset, end_offset, schema_id, record_count FROM data_files
			WHERE table_id = $1 AND committed_snapshot_id IS NOT NULL AND removed_snapshot_id IS NULL ORDER BY start_offset`, id)
		require.NoError(t, err)
		var out []liveFile
		for rows.Next() {
			var l liveFile
			require.NoError(t, rows.Scan(&l.Start, &l.End, &l.Schema, &l.Records))
			out = append(out, l)
		}
		require.NoError(t, rows.Err())
		return out
	}
	// rows reads back the values of the table's live files, as built
	// with each file's version (data file bytes are a function of it).
	rows := func() []string {
		var out []string
		for _, l := range live(tbl.ID) {
			recs, err := kc.ReadRange(ctx, tbl.Topic, 0, l.Start, l.End)
			require.NoError(t, err)
			built, _, err := rangefile.Encode(ctx, store, tbl, recs, l.Schema)
			require.NoError(t, err)
			out = append(out, priorityRate(t, built.Data.Bytes)...)
		}
		return out
	}
	before := live(tbl.ID)
	require.Equal(t, []liveFile{{0, 2, 0, 2}, {2, 3, 1, 1}}, before)
	require.Equal(t, []string{"1 <nil> <nil>", "2 <nil> <nil>", "3 1 12.34"}, rows(), "v1 rows of version 0's file read null")
	gaps, err := tables.DefaultGaps(ctx, pool, []int64{tbl.ID})
	require.NoError(t, err)
	require.Equal(t, tables.DefaultGap{Versions: []int{0}, Ranges: 1}, gaps[tbl.ID])
	require.Contains(t, logged.String(), "run mink table repair t.rd")
	require.Contains(t, logged.String(), "columns=\"[priority rate]\" ranges=1")

	res, err := writer.Repair(ctx, pool, kc, store, tbl, writer.RepairOptions{}, nil)
	require.NoError(t, err)
	require.Equal(t, 1, res.Repaired, fmt.Sprintf("%+v", *res))
	require.Equal(t, 1, res.DefaultRanges)
	require.EqualValues(t, 2, res.DefaultRows)
	require.Zero(t, res.Records)
	require.NotNil(t, res.TableSnapshotID)
	require.Nil(t, res.DLQSnapshotID, "the dead-letter table had and has no file of the range")
	var op string
	require.NoError(t, pool.QueryRow(ctx, `SELECT operation FROM snapshots WHERE table_id = $1 AND snapshot_id = $2`,
		tbl.ID, *res.TableSnapshotID).Scan(&op))
	require.Equal(t, "overwrite", op)
	require.Equal(t, []liveFile{{0, 2, 1, 2}, {2, 3, 1, 1}}, live(tbl.ID))
	require.Empty(t, live(dlq.ID))
	// rate is a decimal(5,2): ValueStr writes 5.00 as 5.
	require.Equal(t, []string{"1 3 5", "2 3 5", "3 1 12.34"}, rows())
	gaps, err = tables.DefaultGaps(ctx, pool, []int64{tbl.ID})
	require.NoError(t, err)
	require.Zero(t, gaps[tbl.ID].Ranges)

	again, err := writer.Repair(ctx, pool, kc, store, tbl, writer.RepairOptions{}, nil)
	require.NoError(t, err)
	require.Zero(t, again.Examined)
	require.Zero(t, again.Repaired)
}

// priorityRate reads a data file's id, priority and rate columns (rate as
// a decimal string; <nil> for a null), row by row.
func priorityRate(t *testing.T, b []byte) []string {
	t.Helper()
	tbl := testkit.ReadParquet(t, b)
	defer tbl.Release()
	rr := array.NewTableReader(tbl, -1)
	defer rr.Release()
	var out []string
	for rr.Next() {
		rec := rr.RecordBatch()
		col := func(name string) (arr interface {
			IsNull(int) bool
			ValueStr(int) string
		}) {
			idx := rec.Schema().FieldIndices(name)
			if len(idx) == 0 {
				return nil
			}
			return rec.Column(idx[0])
		}
		id, prio, rate := col("id"), col("priority"), col("rate")
		for i := range int(rec.NumRows()) {
			s := id.ValueStr(i)
			for _, c := range []interface {
				IsNull(int) bool
				ValueStr(int) string
			}{prio, rate} {
				if c == nil || c.IsNull(i) {
					s += " <nil>"
				} else {
					s += " " + c.ValueStr(i)
				}
			}
			out = append(out, s)
		}
	}
	return out
}
