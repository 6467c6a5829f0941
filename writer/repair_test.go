package writer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/commit"
	"github.com/minkhq/mink/icebergmeta"
	"github.com/minkhq/mink/indexer"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/rangefile"
	"github.com/minkhq/mink/schemas"
	"github.com/minkhq/mink/tables"
	"github.com/minkhq/mink/writer"
)

// Repair after an alter: the ranges whose dead letters the new version
// decodes move them into the table, in one transaction, each record in
// exactly one of the two tables; a range whose dead letters still do not
// decode is left as it is; batches visit each range once; a second repair
// commits nothing; a range below Kafka's log start is unrepairable.
func TestRepair(t *testing.T) {
	ctx := context.Background()
	f := testkit.NewFixture(t, 1, tables.Definition{Namespace: "t", Name: "r", Topic: "r", ValueFormat: "json",
		Schema: json.RawMessage(`{"type":"struct","fields":[{"id":1,"name":"id","type":"long","required":false}]}`),
		// No assembly: the test's ranges stay files of their own.
		Properties: map[string]string{"mink.json.unknown-fields": "dead-letter", tables.PropTargetFileSize: "1"}})
	pool, kc, tbl := f.Pool, f.Client, f.Table
	dlq, err := tables.DLQ(ctx, pool, tbl.ID)
	require.NoError(t, err)
	store := schemas.NewStore(pool, nil)

	ix := indexer.New(pool, kc, indexer.Config{FlushInterval: 50 * time.Millisecond})
	pl := f.Take(t, tables.PartitionScope(tbl.ID, 0), "node-a")
	ixJob := testkit.Start(t, func(ctx context.Context) error { return ix.Run(ctx, pl) })
	w := writer.New(pool, kc, writer.Config{CommitInterval: 50 * time.Millisecond})
	wl := f.Take(t, tables.WriterScope(tbl.ID), "node-a")
	wJob := testkit.Start(t, func(ctx context.Context) error { return w.Run(ctx, wl) })

	committed := func(end int64) func() bool {
		return func() bool {
			offs, err := commit.CommittedOffsets(ctx, pool, tbl, dlq)
			require.NoError(t, err)
			return offs[0] >= end
		}
	}
	// One range per batch: A [0,4) a row, two notes and a bad id; B [4,6)
	// rows only; C [6,8) notes only; D [8,9) a bad id only.
	for _, b := range []struct {
		end    int64
		values []string
	}{
		{4, []string{`{"id":1}`, `{"id":2,"note":"a"}`, `{"id":3,"note":"b"}`, `{"id":"bad"}`}},
		{6, []string{`{"id":5}`, `{"id":6}`}},
		{8, []string{`{"id":7,"note":"c"}`, `{"id":8,"note":"d"}`}},
		{9, []string{`{"id":"bad2"}`}},
	} {
		f.ProduceTo(t, 0, b.values...)
		testkit.WaitFor(t, fmt.Sprint("commit up to ", b.end), committed(b.end))
	}
	live := func(id int64) (n int64) {
		require.NoError(t, pool.QueryRow(ctx, `SELECT coalesce(sum(record_count), 0) FROM data_files
			WHERE table_id = $1 AND committed_snapshot_id IS NOT NULL AND removed_snapshot_id IS NULL`, id).Scan(&n))
		return n
	}
	require.EqualValues(t, 3, live(tbl.ID))
	require.EqualValues(t, 6, live(dlq.ID))

	// Nothing to repair before an alter.
	res, err := writer.Repair(ctx, pool, kc, store, tbl, writer.RepairOptions{}, nil)
	require.NoError(t, err)
	require.Equal(t, writer.RepairResult{SchemaID: 0}, *res)

	_, changed, err := store.Alter(ctx, tbl, iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 2, Name: "note", Type: iceberg.PrimitiveTypes.String}))
	require.NoError(t, err)
	require.True(t, changed)

	// Two batches of at most 2 ranges: A and C, then D.
	res, err = writer.Repair(ctx, pool, kc, store, tbl, writer.RepairOptions{Limit: 2}, nil)
	require.NoError(t, err)
	require.NotNil(t, res.TableSnapshotID)
	require.NotNil(t, res.DLQSnapshotID)
	tableSnap, dlqSnap := *res.TableSnapshotID, *res.DLQSnapshotID
	first := *res
	first.TableSnapshotID, first.DLQSnapshotID = nil, nil
	require.Equal(t, writer.RepairResult{SchemaID: 1, Examined: 2, Repaired: 2, Records: 4, DeadLetters: 1,
		Remaining: 1, Next: &writer.Position{Partition: 0, Offset: 6}}, first)
	res, err = writer.Repair(ctx, pool, kc, store, tbl, writer.RepairOptions{Limit: 2, After: res.Next}, nil)
	require.NoError(t, err)
	require.Equal(t, writer.RepairResult{SchemaID: 1, Examined: 1, DeadLetters: 1}, *res)

	require.EqualValues(t, 7, live(tbl.ID))
	require.EqualValues(t, 2, live(dlq.ID))
	type file struct {
		Key     string
		Start   int64
		Schema  int
		Records int64
	}
	files := func(id int64) []file {
		rows, err := pool.Query(ctx, `SELECT path, start_offset, schema_id, record_count FROM data_files
			WHERE table_id = $1 AND removed_snapshot_id IS NULL ORDER BY start_offset`, id)
		require.NoError(t, err)
		var out []file
		for rows.Next() {
			var f file
			require.NoError(t, rows.Scan(&f.Key, &f.Start, &f.Schema, &f.Records))
			out = append(out, f)
		}
		require.NoError(t, rows.Err())
		return out
	}
	require.Equal(t, []file{
		{"t/r/data/0/0-4-3-s1.parquet", 0, 1, 3},
		{"t/r/data/0/4-6-3.parquet", 4, 0, 2},
		{"t/r/data/0/6-8-3-s1.parquet", 6, 1, 2},
	}, files(tbl.ID))
	require.Equal(t, []file{
		{"t/r~dlq/data/0/0-4-3-s1.parquet", 0, 1, 1},
		{"t/r~dlq/data/0/8-9-3.parquet", 8, 0, 1},
	}, files(dlq.ID))

	// Every live file rebuilds from Kafka to its recorded bytes.
	b := rangefile.NewBuilder(pool, kc, store)
	for _, fl := range append(files(tbl.ID), files(dlq.ID)...) {
		_, err := b.Build(ctx, fl.Key)
		require.NoError(t, err, fl.Key)
	}

	// Each table's current snapshot is the repair's: an overwrite whose
	// totals are the live files; the table's current schema is version 1.
	metadata := func(id int64) table.Metadata {
		var meta []byte
		require.NoError(t, pool.QueryRow(ctx, `SELECT m.content FROM tables t
			JOIN metadata_files m ON m.path = substr(t.metadata_location, length('s3://mink/') + 1) WHERE t.id = $1`, id).Scan(&meta))
		md, err := table.ParseMetadataBytes(meta)
		require.NoError(t, err)
		return md
	}
	for _, c := range []struct {
		id      int64
		snap    int64
		total   string
		deleted string
		added   string
		schema  int
	}{
		{tbl.ID, tableSnap, "7", "1", "5", 1},
		{dlq.ID, dlqSnap, "2", "5", "1", 0},
	} {
		md := metadata(c.id)
		cur := md.CurrentSnapshot()
		require.Equal(t, c.snap, cur.SnapshotID)
		require.Equal(t, table.OpOverwrite, cur.Summary.Operation)
		require.Equal(t, icebergmeta.CommittedByRepair, cur.Summary.Properties[icebergmeta.SummaryCommittedBy])
		require.Equal(t, c.total, cur.Summary.Properties["total-records"])
		require.Equal(t, c.deleted, cur.Summary.Properties["deleted-records"])
		require.Equal(t, c.added, cur.Summary.Properties["added-records"])
		require.Equal(t, c.schema, md.CurrentSchema().ID)
	}

	// Again: D still does not decode; nothing is committed.
	snapshots := func() (n int) {
		require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM snapshots WHERE table_id IN ($1, $2)`, tbl.ID, dlq.ID).Scan(&n))
		return n
	}
	before := snapshots()
	res, err = writer.Repair(ctx, pool, kc, store, tbl, writer.RepairOptions{}, nil)
	require.NoError(t, err)
	require.Equal(t, writer.RepairResult{SchemaID: 1, Examined: 1, DeadLetters: 1}, *res)
	require.Equal(t, before, snapshots())

	// Kafka's log start moves into A: after another alter A is
	// unrepairable (its start is gone), D is examined again.
	_ = wJob.Stop() // its expiry would drop the files below the log start
	_ = ixJob.Stop()
	require.NoError(t, f.Cluster.DeleteRecords("r", 0, 1))
	_, changed, err = store.Alter(ctx, tbl, iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "extra", Type: iceberg.PrimitiveTypes.String}))
	require.NoError(t, err)
	require.True(t, changed)
	res, err = writer.Repair(ctx, pool, kc, store, tbl, writer.RepairOptions{}, nil)
	require.NoError(t, err)
	require.Equal(t, writer.RepairResult{SchemaID: 2, Examined: 2, DeadLetters: 1, Unrepairable: 1, UnrepairableRanges: 1}, *res)
	require.Equal(t, before, snapshots())

	// A dead-letter table is not repaired itself.
	_, err = writer.Repair(ctx, pool, kc, store, dlq, writer.RepairOptions{}, nil)
	require.EqualError(t, err, "invalid table definition: t.r~dlq is a dead-letter table: repair the table it holds the dead letters of")
}

// Concurrent repairs of one table serialize on the row locks: each range
// is repaired once, by one of them; the others find it changed (pending)
// or gone. The writer keeps running meanwhile.
func TestRepairConcurrent(t *testing.T) {
	ctx := context.Background()
	f := testkit.NewFixture(t, 2, tables.Definition{Namespace: "t", Name: "c", Topic: "c", ValueFormat: "json",
		Schema: json.RawMessage(`{"type":"struct","fields":[{"id":1,"name":"id","type":"long","required":false}]}`),
		// No assembly: the ranges counted below stay as they are.
		Properties: map[string]string{"mink.json.unknown-fields": "dead-letter", tables.PropTargetFileSize: "1"}})
	pool, kc, tbl := f.Pool, f.Client, f.Table
	dlq, err := tables.DLQ(ctx, pool, tbl.ID)
	require.NoError(t, err)
	ix := indexer.New(pool, kc, indexer.Config{FlushInterval: 50 * time.Millisecond})
	for p := int32(0); p < 2; p++ {
		l := f.Take(t, tables.PartitionScope(tbl.ID, p), "node-a")
		testkit.Start(t, func(ctx context.Context) error { return ix.Run(ctx, l) })
	}
	w := writer.New(pool, kc, writer.Config{CommitInterval: 50 * time.Millisecond})
	wl := f.Take(t, tables.WriterScope(tbl.ID), "node-a")
	testkit.Start(t, func(ctx context.Context) error { return w.Run(ctx, wl) })
	for round := 0; round < 3; round++ {
		for p := int32(0); p < 2; p++ {
			f.ProduceTo(t, p, `{"id":1}`, `{"id":2,"note":"x"}`, `{"id":3,"note":"y"}`)
		}
		testkit.WaitFor(t, "commit", func() bool {
			offs, err := commit.CommittedOffsets(ctx, pool, tbl, dlq)
			require.NoError(t, err)
			return offs[0] == int64(3*(round+1)) && offs[1] == int64(3*(round+1))
		})
	}
	live := func(id int64) (n int64) {
		require.NoError(t, pool.QueryRow(ctx, `SELECT coalesce(sum(record_count), 0) FROM data_files
			WHERE table_id = $1 AND committed_snapshot_id IS NOT NULL AND removed_snapshot_id IS NULL`, id).Scan(&n))
		return n
	}
	require.EqualValues(t, 6, live(tbl.ID))
	require.EqualValues(t, 12, live(dlq.ID))
	var ranges int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM data_files WHERE table_id = $1 AND removed_snapshot_id IS NULL`, dlq.ID).Scan(&ranges))
	store := schemas.NewStore(pool, nil)
	_, _, err = store.Alter(ctx, tbl, iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "note", Type: iceberg.PrimitiveTypes.String}))
	require.NoError(t, err)

	results := make(chan *writer.RepairResult, 4)
	for i := 0; i < 4; i++ {
		go func() {
			res, err := writer.Repair(ctx, pool, kc, schemas.NewStore(pool, nil), tbl, writer.RepairOptions{}, nil)
			if err != nil {
				t.Error(err)
			}
			results <- res
		}()
	}
	var repaired int
	var records int64
	for i := 0; i < 4; i++ {
		if res := <-results; res != nil {
			repaired += res.Repaired
			records += res.Records
		}
	}
	require.Equal(t, ranges, repaired, "each range once")
	require.EqualValues(t, 12, records)
	require.EqualValues(t, 18, live(tbl.ID))
	require.EqualValues(t, 0, live(dlq.ID))
	res, err := writer.Repair(ctx, pool, kc, store, tbl, writer.RepairOptions{}, nil)
	require.NoError(t, err)
	require.Equal(t, writer.RepairResult{SchemaID: 1}, *res)
}
