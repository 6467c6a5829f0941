package writer

import (
	"context"
	_ "embed"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/minkhq/mink/cluster"
	"github.com/minkhq/mink/commit"
	"github.com/minkhq/mink/datafile"
	"github.com/minkhq/mink/icebergmeta"
	"github.com/minkhq/mink/pgstore"
	"github.com/minkhq/mink/tables"
)

var (
	//go:embed sql/uncommitted_files.sql
	uncommittedFilesSQL string
	//go:embed sql/indexed_ends.sql
	indexedEndsSQL string
	//go:embed sql/data_files_commit.sql
	dataFilesCommitSQL string
	//go:embed sql/tail_files_adopt.sql
	tailFilesAdoptSQL string
	//go:embed sql/data_file_adopt.sql
	dataFileAdoptSQL string
)

// writerSummary marks the writer's snapshots.
var writerSummary = map[string]string{icebergmeta.SummaryCommittedBy: icebergmeta.CommittedByWriter}

// indexedFile is an indexed data file not committed yet.
type indexedFile struct {
	key        string
	partition  int32
	start, end int64
	size       int64
	stats      datafile.Stats
}

func (f indexedFile) added(t *tables.Table) icebergmeta.AddedFile {
	return icebergmeta.AddedFile{Path: commit.Warehouse(t) + f.key, Partition: f.partition, FileSize: f.size, Stats: f.stats}
}

// partPlan is what one round commits for one partition of a table whose
// content ends at e and whose ranges are indexed to the partition's target
// (docs/design.md §4.6, "commit"). Tail files (committed by table loads)
// cover the content past the indexed files committed so far; the round
// turns them into indexed data files without adding or dropping a row:
//
//   - appendFiles: indexed files at or past e hold new rows: appended.
//   - bridge: an indexed file that straddles e holds rows on both sides; the
//     tail file of [e, its end) is built and appended (new rows), so that the
//     replace below covers the same rows on both sides.
//   - replaceFiles replace removeTails (and the bridge) in a replace
//     snapshot: the indexed files below e (and the straddling one), and the
//     tail files that start below the end of the last of them.
//   - remainder: when the last removed tail file goes past that end, the
//     tail file of [that end, its end) is built and added in the replace,
//     which then holds exactly the rows it removes.
//   - adopt: a tail file with an indexed file's key (the same range, the
//     same encoder version) has its bytes: the indexed file takes its place,
//     no snapshot needed.
type partPlan struct {
	appendFiles  []indexedFile
	bridge       *[2]int64
	replaceFiles []indexedFile
	removeTails  []*commit.TailFile
	remainder    *[2]int64
	adopt        []*commit.TailFile
	end          int64
}

// planPartition plans one partition: e is its content end, target the
// offset up to which files lists every indexed file of the table not
// committed yet (in offset order), tails the partition's live tail files (in
// offset order).
func planPartition(e, target int64, files []indexedFile, tails []*commit.TailFile) partPlan {
	pp := partPlan{end: max(e, target)}
	x := int64(-1) // end of the last replacing file
	for _, f := range files {
		switch {
		case f.start >= e:
			pp.appendFiles = append(pp.appendFiles, f)
		case f.end <= e:
			pp.replaceFiles = append(pp.replaceFiles, f)
			x = max(x, f.end)
		default:
			pp.bridge = &[2]int64{e, f.end}
			pp.replaceFiles = append(pp.replaceFiles, f)
			x = max(x, f.end)
		}
	}
	for _, tl := range tails {
		if tl.Start >= x {
			break
		}
		pp.removeTails = append(pp.removeTails, tl)
		if tl.End > x {
			pp.remainder = &[2]int64{x, tl.End}
		}
	}
	// A tail file with an indexed file's key is that file.
	var keep []indexedFile
	for _, f := range pp.replaceFiles {
		i := -1
		for j, tl := range pp.removeTails {
			if tl.Key == f.key {
				i = j
				break
			}
		}
		if i < 0 {
			keep = append(keep, f)
			continue
		}
		pp.adopt = append(pp.adopt, pp.removeTails[i])
		pp.removeTails = append(pp.removeTails[:i:i], pp.removeTails[i+1:]...)
	}
	pp.replaceFiles = keep
	if len(pp.removeTails) == 0 && pp.bridge == nil && pp.remainder == nil {
		// Indexed files below e that no tail file covers hold rows the
		// table does not have (a tail that started at a later log start):
		// new rows, appended.
		pp.appendFiles = append(pp.replaceFiles, pp.appendFiles...)
		pp.replaceFiles = nil
	}
	return pp
}

// roundPlan is one round's commit of a table, planned from one database
// snapshot.
type roundPlan struct {
	base  *commit.Head
	parts map[int32]partPlan
	// built holds the bridge and remainder files by range (nil: no row of
	// the table there).
	built map[[3]int64]*commit.TailFile
}

// errOvertaken says a table load extended a partition the plan appends to
// between the plan and the commit.
var errOvertaken = errors.New("writer: a table load extended the table during the commit")

// commitAttempts bounds how often one round plans again after a table load
// overtook it; the next round goes on.
const commitAttempts = 3

// commit is the writer's commit duty for table t (docs/design.md §4.6): it
// appends t's new indexed data files and replaces the tail files of table
// loads by indexed data files, in at most two snapshots (append, then
// replace), in one transaction under the table's row lock, fenced by the
// writer epoch, and moves t's content ends to the indexed ends.
func (w *Writer) commit(ctx context.Context, l cluster.Lease, t *tables.Table) error {
	src, err := tables.Source(ctx, w.pool, t)
	if err != nil {
		return err
	}
	for attempt := 1; ; attempt++ {
		p, err := w.plan(ctx, t, src)
		if err != nil || p == nil {
			return err
		}
		err = w.store(ctx, l, p)
		if errors.Is(err, errOvertaken) && attempt < commitAttempts {
			continue
		}
		if errors.Is(err, errOvertaken) {
			w.cfg.Logger.Debug("writer: table loads overtook the commit; next round", "table", t.FullName())
			return nil
		}
		return err
	}
}

// plan reads t's head, its uncommitted indexed data files, the indexed
// ends and the live tail files in one database snapshot, plans each
// partition, and builds the bridge and remainder files. It returns nil when
// there is nothing to do.
func (w *Writer) plan(ctx context.Context, t, src *tables.Table) (*roundPlan, error) {
	tx, err := w.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(ctx)
	h, err := commit.ReadIn(ctx, tx, t, src)
	if err != nil {
		return nil, err
	}
	rows, err := tx.Query(ctx, uncommittedFilesSQL, t.ID, w.cfg.MaxFilesPerCommit)
	if err != nil {
		return nil, err
	}
	files, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (indexedFile, error) {
		var f indexedFile
		err := r.Scan(&f.key, &f.partition, &f.start, &f.end, &f.size, &f.stats)
		return f, err
	})
	if err != nil {
		return nil, err
	}
	rows, err = tx.Query(ctx, indexedEndsSQL, src.ID)
	if err != nil {
		return nil, err
	}
	targets := map[int32]int64{}
	var part int32
	var end int64
	if _, err := pgx.ForEachRow(rows, []any{&part, &end}, func() error {
		targets[part] = end
		return nil
	}); err != nil {
		return nil, err
	}
	if len(files) == w.cfg.MaxFilesPerCommit {
		// The list was cut: its last partition is known only up to its last
		// listed file, and the partitions after it not at all.
		last := files[len(files)-1]
		for p := range targets {
			switch {
			case p == last.partition:
				targets[p] = last.end
			case p > last.partition:
				delete(targets, p)
			}
		}
	}
	tails, err := commit.LiveTailFiles(ctx, tx, t)
	if err != nil {
		return nil, err
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, err
	}

	byPart := map[int32][]indexedFile{}
	for _, f := range files {
		byPart[f.partition] = append(byPart[f.partition], f)
	}
	tailsByPart := map[int32][]*commit.TailFile{}
	for _, f := range tails {
		tailsByPart[f.Partition] = append(tailsByPart[f.Partition], f)
	}
	rp := &roundPlan{base: h, parts: map[int32]partPlan{}, built: map[[3]int64]*commit.TailFile{}}
	work := false
	for p, target := range targets {
		e, ok := h.Ends[p]
		if !ok {
			continue // a partition the table does not have yet
		}
		pp := planPartition(e, target, byPart[p], tailsByPart[p])
		if pp.end == e && len(pp.appendFiles)+len(pp.replaceFiles)+len(pp.adopt) == 0 {
			continue
		}
		rp.parts[p] = pp
		work = true
		for _, r := range []*[2]int64{pp.bridge, pp.remainder} {
			if r == nil {
				continue
			}
			f, err := commit.Build(ctx, w.kafka, t, src, p, r[0], r[1])
			if err != nil {
				return nil, err
			}
			rp.built[[3]int64{int64(p), r[0], r[1]}] = f
		}
	}
	if !work {
		return nil, nil
	}
	return rp, nil
}

// file returns the built file of range r of partition p (nil when it has no
// row of the table, or when r is nil).
func (rp *roundPlan) file(p int32, r *[2]int64) *commit.TailFile {
	if r == nil {
		return nil
	}
	return rp.built[[3]int64{int64(p), r[0], r[1]}]
}

// store commits rp under the table's row lock: the append snapshot, then
// the replace snapshot, the adoptions, and the content ends. It returns
// errOvertaken when a table load extended a partition rp appends to.
func (w *Writer) store(ctx context.Context, l cluster.Lease, rp *roundPlan) error {
	t, src := rp.base.Table, rp.base.Source
	tx, err := w.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	h, err := commit.Lock(ctx, tx, t, src)
	if err != nil {
		return err
	}
	var appendFiles, replaceFiles []indexedFile
	var bridges, remainders, removeTails, adopt []*commit.TailFile
	var removedRecords, addedRecords int64
	ends := map[int32]int64{}
	for p, pp := range rp.parts {
		if (len(pp.appendFiles) > 0 || pp.bridge != nil) && h.Ends[p] != rp.base.Ends[p] {
			return errOvertaken
		}
		appendFiles = append(appendFiles, pp.appendFiles...)
		replaceFiles = append(replaceFiles, pp.replaceFiles...)
		removeTails = append(removeTails, pp.removeTails...)
		adopt = append(adopt, pp.adopt...)
		if b := rp.file(p, pp.bridge); b != nil {
			bridges = append(bridges, b)
			removeTails = append(removeTails, b) // replaced below, in the same round
		}
		if r := rp.file(p, pp.remainder); r != nil {
			remainders = append(remainders, r)
			addedRecords += r.Records
		}
		for _, f := range pp.replaceFiles {
			addedRecords += f.stats.RecordCount
		}
		ends[p] = pp.end
	}
	for _, f := range removeTails {
		removedRecords += f.Records
	}

	snapshots := 0
	if len(appendFiles)+len(bridges) > 0 {
		added := make([]icebergmeta.AddedFile, 0, len(appendFiles)+len(bridges))
		for _, f := range appendFiles {
			added = append(added, f.added(t))
		}
		for _, f := range bridges {
			added = append(added, f.Added(t))
		}
		md, err := h.Parsed()
		if err != nil {
			return err
		}
		res, err := icebergmeta.Append(ctx, icebergmeta.AppendInput{
			Metadata: h.Metadata, MetadataLocation: h.MetadataLocation, Parsed: md, Added: added,
			SnapshotID: icebergmeta.NewSnapshotID(), Now: h.Now, Read: commit.Reader(tx), Summary: writerSummary,
		})
		if err != nil {
			return fmt.Errorf("writer: append snapshot of %s: %w", t.FullName(), err)
		}
		if err := commit.Store(ctx, tx, h, &l, "append", res); err != nil {
			return err
		}
		if err := markCommitted(ctx, tx, t, res.SnapshotID, appendFiles); err != nil {
			return err
		}
		if err := commit.InsertTailFiles(ctx, tx, t, res.SnapshotID, bridges); err != nil {
			return err
		}
		snapshots++
	}
	if len(removeTails) > 0 {
		md, err := h.Parsed()
		if err != nil {
			return err
		}
		in := icebergmeta.RewriteInput{
			Metadata: h.Metadata, MetadataLocation: h.MetadataLocation, Parsed: md, Replace: addedRecords == removedRecords,
			SnapshotID: icebergmeta.NewSnapshotID(), Now: h.Now, Read: commit.Reader(tx), Summary: writerSummary,
		}
		keys := make([]string, len(removeTails))
		for i, f := range removeTails {
			keys[i] = f.Key
			in.Removed = append(in.Removed, commit.Warehouse(t)+f.Key)
		}
		for _, f := range replaceFiles {
			in.Added = append(in.Added, f.added(t))
		}
		for _, f := range remainders {
			in.Added = append(in.Added, f.Added(t))
		}
		res, err := icebergmeta.Rewrite(ctx, in)
		if err != nil {
			return fmt.Errorf("writer: replace snapshot of %s: %w", t.FullName(), err)
		}
		op := "replace"
		if !in.Replace {
			// Kafka no longer holds the same records as when the tail files
			// were built (e.g. compaction, retention): the rows change.
			op = "overwrite"
			w.cfg.Logger.Warn("writer: indexed files hold other rows than the tail files they replace",
				"table", t.FullName(), "removed_records", removedRecords, "added_records", addedRecords)
		}
		if err := commit.Store(ctx, tx, h, &l, op, res); err != nil {
			return err
		}
		if err := markCommitted(ctx, tx, t, res.SnapshotID, replaceFiles); err != nil {
			return err
		}
		if err := commit.RemoveTailFiles(ctx, tx, t, res.SnapshotID, keys); err != nil {
			return err
		}
		if err := commit.InsertTailFiles(ctx, tx, t, res.SnapshotID, remainders); err != nil {
			return err
		}
		snapshots++
	}
	if len(adopt) > 0 {
		keys := make([]string, len(adopt))
		for i, f := range adopt {
			keys[i] = f.Key
		}
		rows, err := tx.Query(ctx, tailFilesAdoptSQL, t.ID, keys)
		if err != nil {
			return err
		}
		type adopted struct {
			key string
			id  int64
		}
		done, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (adopted, error) {
			var a adopted
			err := r.Scan(&a.key, &a.id)
			return a, err
		})
		if err != nil {
			return err
		}
		if len(done) != len(keys) {
			return fmt.Errorf("writer: %d of %d tail files of %s to adopt were no longer live", len(keys)-len(done), len(keys), t.FullName())
		}
		for _, a := range done {
			tag, err := tx.Exec(ctx, dataFileAdoptSQL, t.ID, a.key, a.id)
			if err != nil {
				return err
			}
			if tag.RowsAffected() != 1 {
				return fmt.Errorf("writer: data file %s of %s is not an uncommitted indexed file", a.key, t.FullName())
			}
		}
	}
	if err := commit.SetEnds(ctx, tx, h, ends); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return pgstore.Fenced(err)
	}
	if snapshots > 0 {
		w.commits.WithLabelValues(t.FullName()).Add(float64(snapshots))
		w.cfg.Logger.Debug("writer: committed", "table", t.FullName(), "snapshot_id", *h.CurrentSnapshotID,
			"sequence_number", h.LastSequenceNumber, "appended", len(appendFiles)+len(bridges),
			"replaced_tail_files", len(removeTails), "adopted", len(adopt))
	}
	return nil
}

// markCommitted marks files committed by snapshotID in tx.
func markCommitted(ctx context.Context, tx pgx.Tx, t *tables.Table, snapshotID int64, files []indexedFile) error {
	if len(files) == 0 {
		return nil
	}
	keys := make([]string, len(files))
	for i, f := range files {
		keys[i] = f.key
	}
	missed, err := commit.Mark(ctx, tx, dataFilesCommitSQL, keys, t.ID, snapshotID, keys)
	if err != nil {
		return err
	}
	if missed > 0 {
		return fmt.Errorf("writer: %d of %d data files of %s were committed by another snapshot", missed, len(keys), t.FullName())
	}
	return nil
}
