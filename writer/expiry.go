package writer

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/minkhq/mink/cluster"
	"github.com/minkhq/mink/commit"
	"github.com/minkhq/mink/datafile"
	"github.com/minkhq/mink/icebergmeta"
	"github.com/minkhq/mink/kafka"
	"github.com/minkhq/mink/rangefile"
	"github.com/minkhq/mink/schemas"
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
// "overwrite" otherwise. Cleared marks are written in that transaction, or,
// when nothing is removed, in one fenced by check_epoch.sql. Indexed ranges
// are not touched: the indexer goes on from where it was.
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
		if err := w.expireBelowLogStart(ctx, l, tbl, t, offs); err != nil {
			return err
		}
	}
	return nil
}

// belowLogStart returns the unexpired snapshots of t that list a file
// below its partition's log start in offs (snapshots_below_log_start.sql),
// oldest first.
func belowLogStart(ctx context.Context, q tables.Querier, t *tables.Table, offs map[int32]kafka.Offsets) ([]int64, error) {
	parts := make([]int32, 0, len(offs))
	starts := make([]int64, 0, len(offs))
	for p, o := range offs {
		parts = append(parts, p)
		starts = append(starts, o.LogStart)
	}
	rows, err := q.Query(ctx, snapshotsBelowLogStartSQL, t.ID, parts, starts)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}

// expireBelowLogStart expires the snapshots of t that list a file below
// the log start (belowLogStart) when no rewrite did: a metadata file that
// only removes them (icebergmeta.ExpireSnapshots, which also applies the
// table's thinning), under the row lock, fenced by the writer epoch.
// Tagged snapshots stay (never expired); then nothing is written.
func (w *Writer) expireBelowLogStart(ctx context.Context, l cluster.Lease, t, src *tables.Table, offs map[int32]kafka.Offsets) error {
	if ids, err := belowLogStart(ctx, w.pool, t, offs); err != nil || len(ids) == 0 || (len(ids) == 1 && t.CurrentSnapshotID != nil && ids[0] == *t.CurrentSnapshotID) {
		return err
	}
	var expired []int64
	err := w.fencedTx(ctx, l, func(tx pgx.Tx) error {
		h, err := commit.Lock(ctx, tx, t, src)
		if err != nil {
			return err
		}
		ids, err := belowLogStart(ctx, tx, t, offs)
		if err != nil {
			return err
		}
		// The current snapshot's files below the log start are the
		// rewrite's (rewriteFiles); it never expires.
		ids = slices.DeleteFunc(ids, func(id int64) bool { return h.CurrentSnapshotID != nil && id == *h.CurrentSnapshotID })
		if len(ids) == 0 {
			return nil
		}
		md, err := h.Parsed()
		if err != nil {
			return err
		}
		upd, err := icebergmeta.ExpireSnapshots(icebergmeta.ExpireInput{Metadata: h.Metadata,
			MetadataLocation: h.MetadataLocation, Parsed: md, Expire: ids, Now: h.Now})
		if err != nil || upd == nil {
			return err
		}
		expired = upd.Expired
		return commit.StoreMetadata(ctx, tx, h, upd, nil)
	})
	if err == nil && len(expired) > 0 {
		w.cfg.Logger.Info("writer: expired snapshots below the log start", "table", t.FullName(), "expired", len(expired))
	}
	return err
}

var (
	//go:embed sql/expiry_files.sql
	expiryFilesSQL string
	//go:embed sql/data_file_next_generation.sql
	dataFileNextGenerationSQL string
	//go:embed sql/data_files_rebuilt.sql
	dataFilesRebuiltSQL string
	//go:embed sql/data_files_remove.sql
	dataFilesRemoveSQL string
	//go:embed sql/snapshots_below_log_start.sql
	snapshotsBelowLogStartSQL string
)

// expiringFile is a live committed data file that expiry rewrites
// (expiry_files.sql): below or across its partition's log start, marked for
// re-indexing, or of another encoder version.
type expiringFile struct {
	key          string
	partition    int32
	start, end   int64
	size         int64
	sum          []byte
	needsRebuild bool
	logStart     int64
	records      int64
	version      int
}

// rebuildStart is where f's rebuild starts: at the log start when f
// straddles it. ok is false when Kafka holds none of f's records: f is
// removed without a rebuild.
func (f expiringFile) rebuildStart() (start int64, ok bool) {
	if f.end <= f.logStart {
		return 0, false
	}
	return max(f.start, f.logStart), true
}

// rewritePlan is what one expiry pass changes in a table's committed data
// files.
type rewritePlan struct {
	// remove are the keys of the files the snapshot removes.
	remove []string
	// add are the rebuilt files it adds; their generations are read under
	// the row lock.
	add []commit.DataFile
	// rebuilt are the keys of files marked for re-indexing whose rebuild
	// matches their checksum again (the mismatch was transient): their mark
	// is cleared.
	rebuilt                      []string
	removedRecords, addedRecords int64
}

// planRewrite decides what expiry does with files, given their rebuilds by
// key (nil, or missing for a file below the log start: no row of the
// table).
func planRewrite(files []expiringFile, rebuilds map[string]*commit.TailFile) rewritePlan {
	var rp rewritePlan
	for _, f := range files {
		start, ok := f.rebuildStart()
		var df *datafile.File
		schema := 0
		if r := rebuilds[f.key]; r != nil {
			df, schema = r.File, r.Schema
		}
		if ok && start == f.start && f.version == datafile.EncoderVersion && df != nil && int64(len(df.Bytes)) == f.size {
			if sum := sha256.Sum256(df.Bytes); bytes.Equal(sum[:], f.sum) {
				rp.rebuilt = append(rp.rebuilt, f.key)
				continue
			}
		}
		rp.remove = append(rp.remove, f.key)
		rp.removedRecords += f.records
		if !ok || df == nil {
			continue
		}
		rp.addedRecords += df.Stats.RecordCount
		rp.add = append(rp.add, commit.DataFile{Partition: f.partition, Start: start, End: f.end, Schema: schema, File: df})
	}
	return rp
}

// change is rp's snapshot: "replace" when the added files hold as many rows
// as the removed ones (only re-encodes), "delete" when it only removes,
// "overwrite" otherwise.
func (rp *rewritePlan) change(t *tables.Table) commit.Change {
	c := commit.Change{Op: "delete", Removed: rp.remove, Replace: len(rp.add) > 0 && rp.addedRecords == rp.removedRecords}
	switch {
	case c.Replace:
		c.Op = "replace"
	case len(rp.add) > 0:
		c.Op = "overwrite"
	}
	for _, a := range rp.add {
		c.Added = append(c.Added, a.Added(t))
	}
	return c
}

// rewriteFiles is expiry for table t (src owns its partitions) at Kafka's
// offsets offs: it reads the files to rewrite, rebuilds them from Kafka
// outside any lock, decides (planRewrite) and applies the plan.
func (w *Writer) rewriteFiles(ctx context.Context, l cluster.Lease, t, src *tables.Table, offs map[int32]kafka.Offsets) error {
	files, err := w.expiring(ctx, t, offs)
	if err != nil || len(files) == 0 {
		return err
	}
	rebuilds, err := w.rebuild(ctx, t, src, files)
	if err != nil {
		return err
	}
	rp := planRewrite(files, rebuilds)
	if len(rp.remove) == 0 {
		if len(rp.rebuilt) == 0 {
			return nil
		}
		return w.fencedTx(ctx, l, func(tx pgx.Tx) error { return clearRebuilt(ctx, tx, t, rp.rebuilt) })
	}
	return w.applyRewrite(ctx, l, t, src, &rp, offs)
}

// rebuild builds each of files that Kafka still holds records of, from
// where it does, by key; a rebuild without a row of t is missing.
func (w *Writer) rebuild(ctx context.Context, t, src *tables.Table, files []expiringFile) (map[string]*commit.TailFile, error) {
	rebuilds := map[string]*commit.TailFile{}
	for _, f := range files {
		start, ok := f.rebuildStart()
		if !ok {
			continue
		}
		built, err := rangefile.Build(ctx, w.kafka, w.cfg.Schemas, t, src, f.partition, start, f.end, schemas.Choose)
		if err != nil {
			return nil, fmt.Errorf("writer: rebuild %s: %w", f.key, err)
		}
		if built != nil {
			rebuilds[f.key] = built
		}
	}
	return rebuilds, nil
}

// applyRewrite commits rp's snapshot of t in one transaction under the
// table's row lock, fenced by the writer epoch (the snapshot row carries
// the lease): the snapshot, which also expires the snapshots that list a
// file below the log start in offs, the removed files' rows, the added
// files' rows under their range's next generation, and the cleared marks.
func (w *Writer) applyRewrite(ctx context.Context, l cluster.Lease, t, src *tables.Table, rp *rewritePlan, offs map[int32]kafka.Offsets) error {
	var res *icebergmeta.CommitResult
	var c commit.Change
	// Table loads may have committed since the files were read: build on
	// the head under the lock. A repair (Repair) may have removed one of
	// the files since: commit.Rewrite then fails, and the next expiry
	// plans again from the files as they are.
	err := commit.InLock(ctx, w.pool, t, src, func(tx pgx.Tx, h *commit.Head) error {
		for i := range rp.add {
			a := &rp.add[i]
			if err := tx.QueryRow(ctx, dataFileNextGenerationSQL, t.ID, a.Partition, a.Start, datafile.EncoderVersion).Scan(&a.Generation); err != nil {
				return err
			}
		}
		c = rp.change(t)
		// The snapshots that list files below the log start expire in
		// the same commit (those of this commit's removed files too).
		var err error
		if c.Expire, err = belowLogStart(ctx, tx, t, offs); err != nil {
			return err
		}
		if res, err = commit.Rewrite(ctx, tx, h, &l, writerSummary, c); err != nil {
			return err
		}
		// Removed rows first: only one live row per (table, partition, start).
		if _, err := tx.Exec(ctx, dataFilesRemoveSQL, t.ID, res.SnapshotID, rp.remove); err != nil {
			return err
		}
		for i := range rp.add {
			rp.add[i].CommittedSnapshotID = &res.SnapshotID
			if err := commit.InsertDataFile(ctx, tx, t, &rp.add[i]); err != nil {
				return err
			}
		}
		return clearRebuilt(ctx, tx, t, rp.rebuilt)
	})
	if err != nil {
		return err
	}
	w.commits.WithLabelValues(t.FullName()).Inc()
	w.cfg.Logger.Info("writer: rewrote data files", "table", t.FullName(), "operation", c.Op,
		"snapshot_id", res.SnapshotID, "removed", len(rp.remove), "added", len(rp.add))
	return nil
}

// expiring reads t's files to rewrite at Kafka's offsets offs, at most
// MaxFilesPerCommit.
func (w *Writer) expiring(ctx context.Context, t *tables.Table, offs map[int32]kafka.Offsets) ([]expiringFile, error) {
	parts := make([]int32, 0, len(offs))
	starts := make([]int64, 0, len(offs))
	for p, o := range offs {
		parts = append(parts, p)
		starts = append(starts, o.LogStart)
	}
	rows, err := w.pool.Query(ctx, expiryFilesSQL, t.ID, parts, starts, w.cfg.MaxFilesPerCommit, datafile.EncoderVersion)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (expiringFile, error) {
		var f expiringFile
		err := r.Scan(&f.key, &f.partition, &f.start, &f.end, &f.size, &f.sum, &f.needsRebuild, &f.logStart, &f.records, &f.version)
		return f, err
	})
}

// clearRebuilt clears the re-indexing mark of the files keys in tx.
func clearRebuilt(ctx context.Context, tx pgx.Tx, t *tables.Table, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	_, err := tx.Exec(ctx, dataFilesRebuiltSQL, t.ID, keys)
	return err
}
