// Package synthtable builds a synthetic Mink table with any number of data
// files directly in Postgres: the table rows (tables.Create), data_files
// rows with made-up but consistent statistics, and real Iceberg snapshots
// over them (commit.Append: manifests, manifest lists and metadata JSON in
// metadata_files), as the writer would have committed them. No Kafka, no
// Parquet bytes: the files can be planned, not read. It serves the
// planning tests and the planning benchmark (100,000 files in seconds
// instead of the hours of indexing they would take).
package synthtable

import (
	"context"
	"crypto/sha256"
	"fmt"

	"github.com/apache/iceberg-go"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/minkhq/mink/commit"
	"github.com/minkhq/mink/datafile"
	"github.com/minkhq/mink/icebergmeta"
	"github.com/minkhq/mink/tables"
)

// Options describe a synthetic table. Zero fields take the defaults named.
type Options struct {
	// Warehouse of the table (default "mink").
	Warehouse string
	// Namespace and Name (defaults "synth", "events").
	Namespace, Name string
	// Partitions is the number of Kafka partitions (default 4).
	Partitions int32
	// Files is the number of data files (default 100). File i covers
	// partition i % Partitions, offsets [j·Records, (j+1)·Records) with
	// j = i / Partitions.
	Files int
	// Records per file (default 100).
	Records int64
	// FilesPerCommit is the number of files each snapshot appends
	// (default 10,000).
	FilesPerCommit int
	// TailFiles of the Files (the last ones) are tail files of a zero-lag
	// load (tail_files rows, docs/design.md §4.4), appended by one last
	// snapshot committed by a table load.
	TailFiles int
}

// Value is the value column's bound at partition p, offset o: files of a
// string table hold values "<p>-<o>" (2 and 12 digits), so each file's
// value bounds are Value(p, start) and Value(p, end-1), and a filter on
// the value column selects files as precisely as one on the offset.
func Value(p int32, o int64) string { return fmt.Sprintf("%02d-%012d", p, o) }

// Create builds the table in pool and returns it (re-read, with its head).
func Create(ctx context.Context, pool *pgxpool.Pool, o Options) (*tables.Table, error) {
	o = defaults(o)
	t, err := tables.Create(ctx, pool, o.Warehouse, tables.Definition{Namespace: o.Namespace, Name: o.Name,
		Topic: o.Name, ValueFormat: "string"}, starts(o.Partitions))
	if err != nil {
		return nil, err
	}
	valueField, ok := t.Schema.FindFieldByName("value")
	if !ok {
		return nil, fmt.Errorf("synthtable: table %s has no value column", t.FullName())
	}
	indexed := o.Files - o.TailFiles
	for first := 0; first < indexed; first += o.FilesPerCommit {
		n := min(o.FilesPerCommit, indexed-first)
		if err := commitBatch(ctx, pool, t, o, valueField.ID, first, n, false); err != nil {
			return nil, err
		}
	}
	if o.TailFiles > 0 {
		if err := commitBatch(ctx, pool, t, o, valueField.ID, indexed, o.TailFiles, true); err != nil {
			return nil, err
		}
	}
	return tables.Get(ctx, pool, t.ID)
}

func defaults(o Options) Options {
	if o.Warehouse == "" {
		o.Warehouse = "mink"
	}
	if o.Namespace == "" {
		o.Namespace = "synth"
	}
	if o.Name == "" {
		o.Name = "events"
	}
	if o.Partitions == 0 {
		o.Partitions = 4
	}
	if o.Files == 0 {
		o.Files = 100
	}
	if o.Records == 0 {
		o.Records = 100
	}
	if o.FilesPerCommit == 0 {
		o.FilesPerCommit = 10_000
	}
	return o
}

func starts(n int32) []tables.PartitionStart {
	out := make([]tables.PartitionStart, n)
	for p := range out {
		out[p].Partition = int32(p)
	}
	return out
}

// File returns file i of a table made with o: its partition, offsets and
// statistics.
func File(o Options, valueFieldID, i int) (p int32, start, end int64, st datafile.Stats) {
	o = defaults(o)
	p = int32(i % int(o.Partitions))
	start = int64(i/int(o.Partitions)) * o.Records
	end = start + o.Records
	r := o.Records
	// _kafka.timestamp: one record per millisecond from 2026-01-01.
	const t0 = int64(1767225600000000)
	ids := []int{2, 3, 4, 5, valueFieldID}
	st = datafile.Stats{RecordCount: r, ValueCounts: map[int]int64{}, NullValueCounts: map[int]int64{},
		LowerBounds: map[int][]byte{}, UpperBounds: map[int][]byte{}, ColumnSizes: map[int]int64{},
		MinTimestamp: t0 + start*1000, MaxTimestamp: t0 + (end-1)*1000}
	for _, id := range ids {
		st.ValueCounts[id], st.NullValueCounts[id], st.ColumnSizes[id] = r, 0, 8*r
	}
	put := func(id int, lo, hi iceberg.Literal) {
		st.LowerBounds[id], _ = lo.MarshalBinary()
		st.UpperBounds[id], _ = hi.MarshalBinary()
	}
	put(2, iceberg.Int32Literal(p), iceberg.Int32Literal(p))
	put(3, iceberg.Int64Literal(start), iceberg.Int64Literal(end-1))
	put(4, iceberg.TimestampLiteral(st.MinTimestamp), iceberg.TimestampLiteral(st.MaxTimestamp))
	put(5, iceberg.Int32Literal(0), iceberg.Int32Literal(0))
	put(valueFieldID, iceberg.StringLiteral(Value(p, start)), iceberg.StringLiteral(Value(p, end-1)))
	return p, start, end, st
}

// commitBatch appends files first…first+n-1 in one snapshot and records
// their rows (data_files, or tail_files for tail), committed by it.
func commitBatch(ctx context.Context, pool *pgxpool.Pool, t *tables.Table, o Options, valueID, first, n int, tail bool) error {
	added := make([]icebergmeta.AddedFile, n)
	rows := make([][]any, n)
	for k := range n {
		p, start, end, st := File(o, valueID, first+k)
		key := t.DataFileKey(p, start, end, datafile.EncoderVersion)
		size := 1000 + 10*o.Records
		added[k] = icebergmeta.AddedFile{Path: t.WarehouseLocation() + key, Partition: p, FileSize: size, Stats: st}
		sum := sha256.Sum256([]byte(key))
		rows[k] = []any{t.ID, p, start, end, datafile.EncoderVersion, 0, key, size, sum[:], st.RecordCount, st}
	}
	return commit.InLock(ctx, pool, t, t, func(tx pgx.Tx, h *commit.Head) error {
		by := icebergmeta.CommittedByWriter
		if tail {
			by = icebergmeta.CommittedByLoad
		}
		res, err := commit.Append(ctx, tx, h, nil, map[string]string{icebergmeta.SummaryCommittedBy: by}, added)
		if err != nil {
			return err
		}
		for k := range rows {
			rows[k] = append(rows[k], res.SnapshotID, res.SequenceNumber)
		}
		if tail {
			for k, r := range rows { // tail_files has no schema_id
				rows[k] = append(r[:5:5], r[6:]...)
			}
			_, err = tx.CopyFrom(ctx, pgx.Identifier{"tail_files"},
				[]string{"table_id", "partition", "start_offset", "end_offset", "encoder_version", "path",
					"file_size", "sha256", "record_count", "stats", "committed_snapshot_id", "committed_sequence_number"},
				pgx.CopyFromRows(rows))
			return err
		}
		_, err = tx.CopyFrom(ctx, pgx.Identifier{"data_files"},
			[]string{"table_id", "partition", "start_offset", "end_offset", "encoder_version", "schema_id", "path",
				"file_size", "sha256", "record_count", "stats", "committed_snapshot_id", "committed_sequence_number"},
			pgx.CopyFromRows(rows))
		return err
	})
}
