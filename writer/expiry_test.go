package writer_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/cluster"
	"github.com/minkhq/mink/datafile"
	"github.com/minkhq/mink/indexer"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/kafka"
	"github.com/minkhq/mink/pgstore"
	"github.com/minkhq/mink/rangefile"
	"github.com/minkhq/mink/tables"
	"github.com/minkhq/mink/writer"
)

// Expiry: once Kafka's log start passes into a committed file, the writer
// replaces it by the file of [log start, end) in an overwrite snapshot,
// fenced by its epoch: a writer whose lease was taken over rewrites nothing.
func TestExpiryRewritesStraddlingFileAndIsFenced(t *testing.T) {
	ctx := context.Background()
	f := testkit.NewFixture(t, 1, tables.Definition{Namespace: "t", Name: "x", Topic: "x", ValueFormat: "raw"})
	pool, kf, kc, tbl := f.Pool, f.Cluster, f.Client, f.Table
	cl := f.Producer(t, kgo.DefaultProduceTopic("x"))
	for i := 0; i < 10; i++ { // one batch per record: DeleteRecords cuts anywhere
		require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Value: []byte{byte(i)}}).FirstErr())
	}
	wait := func(what string, cond func() bool) { testkit.WaitFor(t, what, cond) }
	liveRecords := func() (n int64) {
		require.NoError(t, pool.QueryRow(ctx, `SELECT coalesce(sum(record_count), 0) FROM data_files
			WHERE table_id = $1 AND committed_snapshot_id IS NOT NULL AND removed_snapshot_id IS NULL`, tbl.ID).Scan(&n))
		return n
	}
	ix := indexer.New(pool, kc, indexer.Config{FlushInterval: 50 * time.Millisecond})
	pl := f.Take(t, tables.PartitionScope(tbl.ID, 0), "node-a")
	ixJob := testkit.Start(t, func(ctx context.Context) error { return ix.Run(ctx, pl) })

	w := writer.New(pool, kc, writer.Config{CommitInterval: 50 * time.Millisecond})
	stale := f.Take(t, tables.WriterScope(tbl.ID), "node-a")
	wJob := testkit.Start(t, func(ctx context.Context) error { return w.Run(ctx, stale) })
	wait("commit of 10 records", func() bool { return liveRecords() == 10 })
	_ = wJob.Stop()
	_ = ixJob.Stop()

	// A new holder takes the writer lease; the log start moves to 4.
	current := f.Take(t, tables.WriterScope(tbl.ID), "node-b")
	require.NoError(t, kf.DeleteRecords("x", 0, 4))
	snapshots := func() (n int) {
		require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM snapshots WHERE table_id = $1`, tbl.ID).Scan(&n))
		return n
	}
	before := snapshots()
	err := w.Run(ctx, stale)
	require.True(t, errors.Is(err, pgstore.ErrFenced), "stale writer: %v", err)
	require.Equal(t, before, snapshots(), "no snapshot from the stale writer")
	require.EqualValues(t, 10, liveRecords(), "no file removed by the stale writer")

	testkit.Start(t, func(ctx context.Context) error { return w.Run(ctx, current) })
	wait("rewrite from the log start", func() bool { return liveRecords() == 6 })
	var path string
	var start, end int64
	var liveFiles int
	require.NoError(t, pool.QueryRow(ctx, `SELECT path, start_offset, end_offset, count(*) OVER () FROM data_files
		WHERE table_id = $1 AND removed_snapshot_id IS NULL ORDER BY start_offset LIMIT 1`, tbl.ID).Scan(&path, &start, &end, &liveFiles))
	require.EqualValues(t, 4, start)
	require.Equal(t, fmt.Sprintf("t/x/data/0/4-%d-%d.parquet", end, datafile.EncoderVersion), path)
	var removed int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM data_files WHERE table_id = $1 AND removed_snapshot_id IS NOT NULL`, tbl.ID).Scan(&removed))
	require.Positive(t, removed)

	// The table's metadata: an overwrite snapshot with 6 records in total.
	var op string
	var meta []byte
	require.NoError(t, pool.QueryRow(ctx, `
		SELECT s.operation, m.content FROM tables t
		JOIN snapshots s ON s.table_id = t.id AND s.snapshot_id = t.current_snapshot_id
		JOIN metadata_files m ON m.path = substr(t.metadata_location, length('s3://mink/') + 1)
		WHERE t.id = $1`, tbl.ID).Scan(&op, &meta))
	require.Equal(t, "overwrite", op)
	md, err := table.ParseMetadataBytes(meta)
	require.NoError(t, err)
	require.Equal(t, table.OpOverwrite, md.CurrentSnapshot().Summary.Operation)
	require.Equal(t, "6", md.CurrentSnapshot().Summary.Properties["total-records"])
	require.Equal(t, strconv.Itoa(liveFiles), md.CurrentSnapshot().Summary.Properties["total-data-files"])

	// The builder rebuilds the new file from Kafka and it matches.
	b, err := rangefile.NewBuilder(pool, kc, nil).Build(ctx, path)
	require.NoError(t, err)
	require.NotEmpty(t, b)
}

// An upgrade that changed the encoder's bytes: committed files of another
// encoder version cannot be rebuilt by this node, so the writer re-encodes
// them under this version's key, in a replace snapshot (the same rows).
func TestExpiryReencodesOtherEncoderVersions(t *testing.T) {
	ctx := context.Background()
	f := testkit.NewFixture(t, 1, tables.Definition{Namespace: "t", Name: "v", Topic: "v", ValueFormat: "raw"})
	pool, kc, tbl := f.Pool, f.Client, f.Table
	cl := f.Producer(t, kgo.DefaultProduceTopic("v"))
	for i := 0; i < 10; i++ {
		require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Value: []byte{byte(i)}}).FirstErr())
	}
	// The range [0, 10) as an older Mink indexed it: encoder version 1.
	spec, err := tbl.Spec()
	require.NoError(t, err)
	recs, err := kc.ReadRange(ctx, "v", 0, 0, 10)
	require.NoError(t, err)
	res, err := datafile.Build(spec, recs)
	require.NoError(t, err)
	pl := f.Take(t, tables.PartitionScope(tbl.ID, 0), "node-a")
	_, err = pool.Exec(ctx, `INSERT INTO ranges (table_id, partition, start_offset, end_offset, record_count, lease_scope, lease_holder, lease_epoch)
		VALUES ($1, 0, 0, 10, 10, $2, $3, $4)`, tbl.ID, pl.Scope, pl.Holder, pl.Epoch)
	require.NoError(t, err)
	old := "t/v/data/0/0-10-1.parquet"
	_, err = pool.Exec(ctx, `INSERT INTO data_files (table_id, partition, start_offset, end_offset, encoder_version, schema_id, path,
		file_size, sha256, record_count, stats) VALUES ($1, 0, 0, 10, 1, 0, $2, $3, $4, 10, $5)`,
		tbl.ID, old, len(res.Data.Bytes), res.Data.SHA256[:], res.Data.Stats)
	require.NoError(t, err)

	w := writer.New(pool, kc, writer.Config{CommitInterval: 50 * time.Millisecond})
	wl := f.Take(t, tables.WriterScope(tbl.ID), "node-a")
	wJob := testkit.Start(t, func(ctx context.Context) error { return w.Run(ctx, wl) })
	want := fmt.Sprintf("t/v/data/0/0-10-%d.parquet", datafile.EncoderVersion)
	testkit.WaitFor(t, "the re-encoded file", func() bool {
		var n int
		require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM data_files WHERE table_id = $1 AND path = $2
			AND committed_snapshot_id IS NOT NULL AND removed_snapshot_id IS NULL`, tbl.ID, want).Scan(&n))
		return n == 1
	})
	_ = wJob.Stop()
	var oldRemoved bool
	require.NoError(t, pool.QueryRow(ctx, `SELECT removed_snapshot_id IS NOT NULL FROM data_files WHERE path = $1`, old).Scan(&oldRemoved))
	require.True(t, oldRemoved)
	var meta []byte
	require.NoError(t, pool.QueryRow(ctx, `
		SELECT m.content FROM tables t JOIN metadata_files m ON m.path = substr(t.metadata_location, length('s3://mink/') + 1)
		WHERE t.id = $1`, tbl.ID).Scan(&meta))
	md, err := table.ParseMetadataBytes(meta)
	require.NoError(t, err)
	cur := md.CurrentSnapshot()
	require.Equal(t, table.OpReplace, cur.Summary.Operation)
	require.Equal(t, "10", cur.Summary.Properties["total-records"])
	require.Equal(t, "10", cur.Summary.Properties["added-records"])
	require.Equal(t, "10", cur.Summary.Properties["deleted-records"])
	// Its parent appended the old file.
	parent := md.SnapshotByID(*cur.ParentSnapshotID)
	require.Equal(t, table.OpAppend, parent.Summary.Operation)

	b, err := rangefile.NewBuilder(pool, kc, nil).Build(ctx, want)
	require.NoError(t, err)
	require.Equal(t, res.Data.Bytes, b, "the re-encoded file is this encoder's bytes")
}

// history is a table over 2 partitions whose writer committed snapshots of
// partition 0 only (before), then of partition 1's first file too
// (listing, the current one among them), while its indexer and writer
// run; both sorted by id.
type history struct {
	f               *testkit.Fixture
	w               *writer.Writer
	wl              cluster.Lease
	wJob            *testkit.Job
	before, listing []int64
}

func newHistory(t *testing.T) *history {
	ctx := context.Background()
	// Target 1 byte: no assembly commits a snapshot of its own meanwhile.
	f := testkit.NewFixture(t, 2, tables.Definition{Namespace: "t", Name: "h", Topic: "h", ValueFormat: "raw",
		Properties: map[string]string{tables.PropTargetFileSize: "1"}})
	pool, kc, tbl := f.Pool, f.Client, f.Table
	ix := indexer.New(pool, kc, indexer.Config{FlushInterval: 30 * time.Millisecond})
	for p := range int32(2) {
		pl := f.Take(t, tables.PartitionScope(tbl.ID, p), "node-a")
		testkit.Start(t, func(ctx context.Context) error { return ix.Run(ctx, pl) })
	}
	h := &history{f: f, w: writer.New(pool, kc, writer.Config{CommitInterval: 50 * time.Millisecond}),
		wl: f.Take(t, tables.WriterScope(tbl.ID), "node-a")}
	h.wJob = testkit.Start(t, func(ctx context.Context) error { return h.w.Run(ctx, h.wl) })

	for i := range 3 {
		f.ProduceTo(t, 0, strconv.Itoa(i))
		n := int64(i + 1)
		testkit.WaitFor(t, "commit of partition 0", func() bool { return h.liveRecords(t) == n })
	}
	for i := range 6 { // one batch per record: DeleteRecords cuts anywhere
		f.ProduceTo(t, 1, strconv.Itoa(i))
	}
	testkit.WaitFor(t, "commit of partition 1", func() bool { return h.liveRecords(t) == 9 })
	f.ProduceTo(t, 0, "3")
	testkit.WaitFor(t, "one more commit", func() bool { return h.liveRecords(t) == 10 })
	var firstSeq int64
	require.NoError(t, pool.QueryRow(ctx, `SELECT min(committed_sequence_number) FROM data_files
		WHERE table_id = $1 AND partition = 1`, tbl.ID).Scan(&firstSeq))
	h.before = sortedColumn[int64](t, pool, `SELECT snapshot_id FROM snapshots WHERE table_id = $1 AND sequence_number < $2`, tbl.ID, firstSeq)
	h.listing = sortedColumn[int64](t, pool, `SELECT snapshot_id FROM snapshots WHERE table_id = $1 AND sequence_number >= $2`, tbl.ID, firstSeq)
	require.GreaterOrEqual(t, len(h.before), 3)
	require.GreaterOrEqual(t, len(h.listing), 2)
	return h
}

func (h *history) liveRecords(t *testing.T) (n int64) {
	require.NoError(t, h.f.Pool.QueryRow(context.Background(), `SELECT coalesce(sum(record_count), 0) FROM data_files
		WHERE table_id = $1 AND committed_snapshot_id IS NOT NULL AND removed_snapshot_id IS NULL`, h.f.Table.ID).Scan(&n))
	return n
}

// current returns the table's current snapshot id and its metadata's
// snapshots and snapshot-log entries, sorted.
func (h *history) current(t *testing.T) (cur int64, md table.Metadata, ids, logged []int64) {
	var meta []byte
	require.NoError(t, h.f.Pool.QueryRow(context.Background(), `
		SELECT t.current_snapshot_id, m.content FROM tables t
		JOIN metadata_files m ON m.path = substr(t.metadata_location, length('s3://mink/') + 1)
		WHERE t.id = $1`, h.f.Table.ID).Scan(&cur, &meta))
	md, err := table.ParseMetadataBytes(meta)
	require.NoError(t, err)
	for _, s := range md.Snapshots() {
		ids = append(ids, s.SnapshotID)
	}
	for e := range md.SnapshotLogs() {
		logged = append(logged, e.SnapshotID)
	}
	slices.Sort(ids)
	slices.Sort(logged)
	return cur, md, ids, logged
}

func (h *history) expiredRows(t *testing.T) []int64 {
	return sortedColumn[int64](t, h.f.Pool, `SELECT snapshot_id FROM snapshots WHERE table_id = $1 AND expired_at IS NOT NULL`, h.f.Table.ID)
}

// TestExpiryBelowLogStart: once Kafka's log start passes into a file, the
// snapshots that list it can no longer be read: the writer's rewrite
// expires them in its own commit, and the snapshots from before that file
// stay, in the metadata's snapshots and snapshot-log (their files are all
// still in Kafka).
func TestExpiryBelowLogStart(t *testing.T) {
	h := newHistory(t)
	require.NoError(t, h.f.Cluster.DeleteRecords("h", 1, 2))
	testkit.WaitFor(t, "rewrite from the log start", func() bool { return h.liveRecords(t) == 8 })
	cur, md, ids, logged := h.current(t)
	// delete, or overwrite when a file straddles the new log start.
	require.Contains(t, []table.Operation{table.OpDelete, table.OpOverwrite}, md.CurrentSnapshot().Summary.Operation)
	want := append(slices.Clone(h.before), cur)
	slices.Sort(want)
	require.Equal(t, want, ids, "the snapshots from before partition 1's first file, and the rewrite")
	require.Equal(t, want, logged)
	require.Equal(t, h.listing, h.expiredRows(t), "every snapshot that listed the file below the log start expired")
	// Nothing else is expired by the next passes.
	time.Sleep(600 * time.Millisecond)
	require.Equal(t, h.listing, h.expiredRows(t))
}

// TestExpiryBelowLogStartMetadataOnly: snapshots that list a file below
// the log start expire without a rewrite (a metadata file that only
// removes them) when the current snapshot lists none, and the current
// snapshot never expires.
func TestExpiryBelowLogStartMetadataOnly(t *testing.T) {
	ctx := context.Background()
	h := newHistory(t)
	require.NoError(t, h.wJob.Stop())
	cur, _, _, _ := h.current(t)
	require.Contains(t, h.listing, cur)
	// As if Kafka's log start of partition 1 were 2 and no rewrite came.
	offs := map[int32]kafka.Offsets{0: {}, 1: {LogStart: 2}}
	require.NoError(t, h.w.ExpireBelowLogStart(ctx, h.wl, h.f.Table, offs))
	after, _, ids, logged := h.current(t)
	require.Equal(t, cur, after, "no snapshot added")
	want := append(slices.Clone(h.before), cur)
	slices.Sort(want)
	require.Equal(t, want, ids)
	require.Equal(t, want, logged)
	require.Equal(t, slices.DeleteFunc(slices.Clone(h.listing), func(id int64) bool { return id == cur }), h.expiredRows(t))
	// Again: nothing left to expire, no new metadata.
	var loc string
	require.NoError(t, h.f.Pool.QueryRow(ctx, `SELECT metadata_location FROM tables WHERE id = $1`, h.f.Table.ID).Scan(&loc))
	require.NoError(t, h.w.ExpireBelowLogStart(ctx, h.wl, h.f.Table, offs))
	var loc2 string
	require.NoError(t, h.f.Pool.QueryRow(ctx, `SELECT metadata_location FROM tables WHERE id = $1`, h.f.Table.ID).Scan(&loc2))
	require.Equal(t, loc, loc2)
}
