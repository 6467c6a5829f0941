package writer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/minkhq/mink/cluster"
	"github.com/minkhq/mink/commit"
	"github.com/minkhq/mink/datafile"
	"github.com/minkhq/mink/icebergmeta"
	"github.com/minkhq/mink/kafka"
	"github.com/minkhq/mink/pgstore"
	"github.com/minkhq/mink/tables"
)

// expiryEvery is how many commit intervals pass between two expiry passes.
const expiryEvery = 5

func (w *Writer) expiryInterval() time.Duration { return expiryEvery * w.cfg.CommitInterval }

// expire is the writer's expiry and re-indexing duty (docs/design.md §4.5, §4.6),
// for the table and its dead-letter table. For each live committed data
// file of a partition:
//
//   - whose range ends at or below Kafka's log start offset: removed;
//   - whose range straddles the log start: replaced by the file of
//     [log start, end) ("<p>/<logStart>-<end>-<v>.parquet"), rebuilt from
//     Kafka now;
//   - marked needs_rebuild by the builder (its rebuild no longer matches the
//     recorded checksum, e.g. after log compaction): replaced by the file of
//     the same range rebuilt from what Kafka holds now, under the next
//     generation of the range ("<start>-<end>-<v>-g<n>.parquet"), or cleared
//     when the rebuild matches again;
//   - encoded by another encoder version (an upgrade that changed the
//     encoder's bytes, docs/design.md §4.5): re-encoded with this one under
//     its key ("<start>-<end>-<this version>.parquet"). This node cannot
//     rebuild the old version's bytes, so until then a read of such a file
//     that no node has cached fails.
//
// A file whose rebuild holds no row is only removed. The removals and
// additions of a table go in one snapshot under the table's row lock, fenced
// by the writer epoch: "replace" when the added files hold as many rows as
// the removed ones (only re-encodes), "delete" when it only removes,
// "overwrite" otherwise. Indexed ranges are not touched: the indexer goes on
// from where it was.
func (w *Writer) expire(ctx context.Context, l cluster.Lease, t, dlq *tables.Table) error {
	offs, err := w.kafka.ListOffsets(ctx, t.Topic)
	if err != nil {
		return err
	}
	for _, tbl := range []*tables.Table{t, dlq} {
		if tbl == nil {
			continue
		}
		// Re-read: a commit of this round moved the metadata location.
		if tbl, err = tables.Get(ctx, w.pool, tbl.ID); err != nil {
			return err
		}
		if tbl.CurrentSnapshotID == nil {
			continue
		}
		if err := w.rewriteFiles(ctx, l, tbl, t, offs); err != nil {
			return err
		}
	}
	return nil
}

type liveFile struct {
	path         string
	partition    int32
	start, end   int64
	size         int64
	sum          []byte
	needsRebuild bool
	logStart     int64
	records      int64
	version      int
}

type newFile struct {
	key        string
	partition  int32
	start, end int64
	generation int
	file       *datafile.File
}

func (w *Writer) rewriteFiles(ctx context.Context, l cluster.Lease, t, src *tables.Table, offs map[int32]kafka.Offsets) error {
	parts := make([]int32, 0, len(offs))
	starts := make([]int64, 0, len(offs))
	for p, o := range offs {
		parts = append(parts, p)
		starts = append(starts, o.LogStart)
	}
	rows, err := w.pool.Query(ctx, `
		SELECT d.path, d.partition, d.start_offset, d.end_offset, d.file_size, d.sha256, d.needs_rebuild, o.log_start,
		       d.record_count, d.encoder_version
		FROM data_files d JOIN unnest($2::int[], $3::bigint[]) AS o(partition, log_start) ON o.partition = d.partition
		WHERE d.table_id = $1 AND d.committed_snapshot_id IS NOT NULL AND d.removed_snapshot_id IS NULL
		  AND (d.start_offset < o.log_start OR d.needs_rebuild OR d.encoder_version <> $5)
		ORDER BY d.partition, d.start_offset LIMIT $4`, t.ID, parts, starts, w.cfg.MaxFilesPerCommit, datafile.EncoderVersion)
	if err != nil {
		return err
	}
	files, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (liveFile, error) {
		var f liveFile
		err := r.Scan(&f.path, &f.partition, &f.start, &f.end, &f.size, &f.sum, &f.needsRebuild, &f.logStart, &f.records, &f.version)
		return f, err
	})
	if err != nil || len(files) == 0 {
		return err
	}

	warehouse := commit.Warehouse(t)
	var removed, removedKeys, unchanged []string
	var added []newFile
	var removedRecords, addedRecords int64
	for _, f := range files {
		if f.end <= f.logStart {
			removed, removedKeys = append(removed, warehouse+f.path), append(removedKeys, f.path)
			removedRecords += f.records
			continue
		}
		start := max(f.start, f.logStart)
		built, err := commit.Build(ctx, w.kafka, t, src, f.partition, start, f.end)
		if err != nil {
			return fmt.Errorf("writer: rebuild %s: %w", f.path, err)
		}
		var df *datafile.File
		if built != nil {
			df = built.File
		}
		if start == f.start && f.version == datafile.EncoderVersion && df != nil && int64(len(df.Bytes)) == f.size {
			if sum := sha256.Sum256(df.Bytes); bytes.Equal(sum[:], f.sum) {
				unchanged = append(unchanged, f.path) // the mismatch was transient
				continue
			}
		}
		removed, removedKeys = append(removed, warehouse+f.path), append(removedKeys, f.path)
		removedRecords += f.records
		if df == nil {
			continue
		}
		addedRecords += df.Stats.RecordCount
		// Keys name the encoder version, so a re-encoded file of the same
		// range starts again at generation 0.
		var gen int
		if err := w.pool.QueryRow(ctx, `
			SELECT coalesce(max(generation) + 1, 0) FROM data_files
			WHERE table_id = $1 AND partition = $2 AND start_offset = $3 AND encoder_version = $4`,
			t.ID, f.partition, start, datafile.EncoderVersion).Scan(&gen); err != nil {
			return err
		}
		added = append(added, newFile{key: t.DataFileKeyGen(f.partition, start, f.end, datafile.EncoderVersion, gen),
			partition: f.partition, start: start, end: f.end, generation: gen, file: df})
	}
	if len(unchanged) > 0 {
		if _, err := w.pool.Exec(ctx, `UPDATE data_files SET needs_rebuild = false WHERE table_id = $1 AND path = ANY($2)`,
			t.ID, unchanged); err != nil {
			return err
		}
	}
	if len(removed) == 0 {
		return nil
	}

	tx, err := w.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	// Table loads may have committed since: build on the head under the
	// table's row lock (only the writer removes data files, so the files
	// to remove are still there).
	h, err := commit.Lock(ctx, tx, t, src)
	if err != nil {
		return err
	}
	md, err := h.Parsed()
	if err != nil {
		return err
	}
	in := icebergmeta.RewriteInput{
		Metadata: h.Metadata, MetadataLocation: h.MetadataLocation, Parsed: md, Removed: removed,
		// Files only re-encoded (a new encoder version) hold the same rows.
		Replace:    len(added) > 0 && addedRecords == removedRecords,
		SnapshotID: icebergmeta.NewSnapshotID(), Now: h.Now, Read: commit.Reader(tx), Summary: writerSummary,
	}
	for _, a := range added {
		in.Added = append(in.Added, icebergmeta.AddedFile{Path: warehouse + a.key, Partition: a.partition,
			FileSize: int64(len(a.file.Bytes)), Stats: a.file.Stats})
	}
	res, err := icebergmeta.Rewrite(ctx, in)
	if err != nil {
		return fmt.Errorf("writer: build rewrite snapshot of %s: %w", t.FullName(), err)
	}
	op := "delete"
	switch {
	case in.Replace:
		op = "replace"
	case len(added) > 0:
		op = "overwrite"
	}
	if err := commit.Store(ctx, tx, h, &l, op, res); err != nil {
		return err
	}
	// Removed rows first: only one live row per (table, partition, start).
	if _, err := tx.Exec(ctx, `
		UPDATE data_files SET removed_snapshot_id = $2, needs_rebuild = false
		WHERE table_id = $1 AND path = ANY($3) AND removed_snapshot_id IS NULL`,
		t.ID, res.SnapshotID, removedKeys); err != nil {
		return err
	}
	for _, a := range added {
		f := a.file
		if _, err := tx.Exec(ctx, `
			INSERT INTO data_files (table_id, partition, start_offset, end_offset, encoder_version, schema_id, path,
			                        file_size, sha256, record_count, stats, min_timestamp, max_timestamp,
			                        committed_snapshot_id, generation)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
			t.ID, a.partition, a.start, a.end, datafile.EncoderVersion, t.Schema.ID, a.key,
			len(f.Bytes), f.SHA256[:], f.Stats.RecordCount, f.Stats,
			pgstore.Timestamptz(f.Stats.MinTimestamp), pgstore.Timestamptz(f.Stats.MaxTimestamp),
			res.SnapshotID, a.generation); err != nil {
			return err
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return pgstore.Fenced(err)
	}
	w.commits.WithLabelValues(t.FullName()).Inc()
	w.cfg.Logger.Info("writer: rewrote data files", "table", t.FullName(), "operation", op,
		"snapshot_id", res.SnapshotID, "removed", len(removed), "added", len(added))
	return nil
}
