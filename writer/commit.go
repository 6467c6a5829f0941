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
	"github.com/minkhq/mink/rangefile"
	"github.com/minkhq/mink/schemas"
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
	return icebergmeta.AddedFile{Path: t.WarehouseLocation() + f.key, Partition: f.partition, FileSize: f.size, Stats: f.stats}
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

// roundState is what a round reads of a table, in one database snapshot.
type roundState struct {
	head *commit.Head
	// files are the indexed data files not committed yet, by partition and
	// offset: at most MaxFilesPerCommit.
	files []indexedFile
	// targets are the indexed ends by partition (indexed_ends.sql).
	targets map[int32]int64
	// tails are the live tail files, by partition and offset.
	tails []*commit.TailFile
}

// listedTargets returns the offsets up to which files lists every
// uncommitted indexed file, by partition: the indexed ends, unless the list
// was cut at limit files; then its last partition is known only up to its
// last listed file, and the partitions after it not at all.
func listedTargets(targets map[int32]int64, files []indexedFile, limit int) map[int32]int64 {
	if len(files) < limit {
		return targets
	}
	last := files[len(files)-1]
	out := map[int32]int64{}
	for p, end := range targets {
		switch {
		case p == last.partition:
			out[p] = last.end
		case p < last.partition:
			out[p] = end
		}
	}
	return out
}

// planRound plans each partition of s (planPartition) that has work: files
// to commit or adopt, or a content end to move. A partition the table does
// not have yet waits.
func planRound(s *roundState) map[int32]partPlan {
	byPart := map[int32][]indexedFile{}
	for _, f := range s.files {
		byPart[f.partition] = append(byPart[f.partition], f)
	}
	tailsByPart := map[int32][]*commit.TailFile{}
	for _, f := range s.tails {
		tailsByPart[f.Partition] = append(tailsByPart[f.Partition], f)
	}
	parts := map[int32]partPlan{}
	for p, target := range s.targets {
		e, ok := s.head.Ends[p]
		if !ok {
			continue
		}
		pp := planPartition(e, target, byPart[p], tailsByPart[p])
		if pp.end == e && len(pp.appendFiles)+len(pp.replaceFiles)+len(pp.adopt) == 0 {
			continue
		}
		parts[p] = pp
	}
	return parts
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

// plan reads t's round state (read), plans each partition (planRound), and
// builds the bridge and remainder files. It returns nil when there is
// nothing to do.
func (w *Writer) plan(ctx context.Context, t, src *tables.Table) (*roundPlan, error) {
	s, err := w.read(ctx, t, src)
	if err != nil {
		return nil, err
	}
	parts := planRound(s)
	if len(parts) == 0 {
		return nil, nil
	}
	rp := &roundPlan{base: s.head, parts: parts, built: map[[3]int64]*commit.TailFile{}}
	for p, pp := range parts {
		for _, r := range []*[2]int64{pp.bridge, pp.remainder} {
			if r == nil {
				continue
			}
			f, err := rangefile.Build(ctx, w.kafka, w.cfg.Schemas, t, src, p, r[0], r[1], schemas.Choose)
			if err != nil {
				return nil, err
			}
			rp.built[[3]int64{int64(p), r[0], r[1]}] = f
		}
	}
	return rp, nil
}

// read reads t's head, its uncommitted indexed data files, the indexed
// ends and the live tail files in one database snapshot.
func (w *Writer) read(ctx context.Context, t, src *tables.Table) (*roundState, error) {
	s := &roundState{}
	err := pgx.BeginTxFunc(ctx, w.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var err error
		if s.head, err = commit.ReadIn(ctx, tx, t, src); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, uncommittedFilesSQL, t.ID, w.cfg.MaxFilesPerCommit)
		if err != nil {
			return err
		}
		if s.files, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (indexedFile, error) {
			var f indexedFile
			err := r.Scan(&f.key, &f.partition, &f.start, &f.end, &f.size, &f.stats)
			return f, err
		}); err != nil {
			return err
		}
		rows, err = tx.Query(ctx, indexedEndsSQL, src.ID)
		if err != nil {
			return err
		}
		if s.targets, err = commit.OffsetsByPartition(rows); err != nil {
			return err
		}
		s.tails, err = commit.LiveTailFiles(ctx, tx, t)
		return err
	})
	if err != nil {
		return nil, err
	}
	s.targets = listedTargets(s.targets, s.files, w.cfg.MaxFilesPerCommit)
	return s, nil
}

// file returns the built file of range r of partition p (nil when it has no
// row of the table, or when r is nil).
func (rp *roundPlan) file(p int32, r *[2]int64) *commit.TailFile {
	if r == nil {
		return nil
	}
	return rp.built[[3]int64{int64(p), r[0], r[1]}]
}

// roundCommit is what a round stores under the row lock: rp's partition
// plans, gathered.
type roundCommit struct {
	// appendFiles and bridges are the append snapshot's files.
	appendFiles []indexedFile
	bridges     []*commit.TailFile
	// replaceFiles and remainders replace removeTails (the bridges among
	// them) in the replace snapshot.
	replaceFiles []indexedFile
	remainders   []*commit.TailFile
	removeTails  []*commit.TailFile
	// removedRecords and addedRecords are the replace's rows out and in.
	removedRecords, addedRecords int64
	// adopt are the tail files indexed files take the place of.
	adopt []*commit.TailFile
	// ends are the new content ends.
	ends map[int32]int64
}

// gather gathers rp into one commit on a head whose content ends are ends
// (read under the lock). It returns errOvertaken when a table load extended
// a partition rp appends to since rp was planned.
func (rp *roundPlan) gather(ends map[int32]int64) (*roundCommit, error) {
	rc := &roundCommit{ends: map[int32]int64{}}
	for p, pp := range rp.parts {
		if (len(pp.appendFiles) > 0 || pp.bridge != nil) && ends[p] != rp.base.Ends[p] {
			return nil, errOvertaken
		}
		rc.appendFiles = append(rc.appendFiles, pp.appendFiles...)
		rc.replaceFiles = append(rc.replaceFiles, pp.replaceFiles...)
		rc.removeTails = append(rc.removeTails, pp.removeTails...)
		rc.adopt = append(rc.adopt, pp.adopt...)
		if b := rp.file(p, pp.bridge); b != nil {
			rc.bridges = append(rc.bridges, b)
			rc.removeTails = append(rc.removeTails, b) // replaced below, in the same round
		}
		if r := rp.file(p, pp.remainder); r != nil {
			rc.remainders = append(rc.remainders, r)
			rc.addedRecords += r.Records
		}
		for _, f := range pp.replaceFiles {
			rc.addedRecords += f.stats.RecordCount
		}
		rc.ends[p] = pp.end
	}
	for _, f := range rc.removeTails {
		rc.removedRecords += f.Records
	}
	return rc, nil
}

// store commits rp under the table's row lock: the append snapshot, then
// the replace snapshot, the adoptions, and the content ends. It returns
// errOvertaken when a table load extended a partition rp appends to.
func (w *Writer) store(ctx context.Context, l cluster.Lease, rp *roundPlan) error {
	t, src := rp.base.Table, rp.base.Source
	var h *commit.Head
	var rc *roundCommit
	snapshots := 0
	err := commit.InLock(ctx, w.pool, t, src, func(tx pgx.Tx, locked *commit.Head) error {
		h = locked
		var err error
		if rc, err = rp.gather(h.Ends); err != nil {
			return err
		}
		if len(rc.appendFiles)+len(rc.bridges) > 0 {
			if err := w.appendIndexed(ctx, tx, l, h, rc); err != nil {
				return err
			}
			snapshots++
		}
		if len(rc.removeTails) > 0 {
			if err := w.replaceTails(ctx, tx, l, h, rc); err != nil {
				return err
			}
			snapshots++
		}
		if err := adoptTails(ctx, tx, t, rc.adopt); err != nil {
			return err
		}
		return commit.SetEnds(ctx, tx, h, rc.ends)
	})
	if err != nil {
		return err
	}
	if snapshots > 0 {
		w.commits.WithLabelValues(t.FullName()).Add(float64(snapshots))
		w.cfg.Logger.Debug("writer: committed", "table", t.FullName(), "snapshot_id", *h.CurrentSnapshotID,
			"sequence_number", h.LastSequenceNumber, "appended", len(rc.appendFiles)+len(rc.bridges),
			"replaced_tail_files", len(rc.removeTails), "adopted", len(rc.adopt))
	}
	return nil
}

// appendIndexed commits rc's append snapshot on h in tx: the new indexed
// files and the bridges.
func (w *Writer) appendIndexed(ctx context.Context, tx pgx.Tx, l cluster.Lease, h *commit.Head, rc *roundCommit) error {
	t := h.Table
	added := make([]icebergmeta.AddedFile, 0, len(rc.appendFiles)+len(rc.bridges))
	for _, f := range rc.appendFiles {
		added = append(added, f.added(t))
	}
	for _, f := range rc.bridges {
		added = append(added, f.Added(t))
	}
	res, err := commit.Append(ctx, tx, h, &l, writerSummary, added)
	if err != nil {
		return err
	}
	if err := markCommitted(ctx, tx, t, res.SnapshotID, rc.appendFiles); err != nil {
		return err
	}
	return commit.InsertTailFiles(ctx, tx, t, res.SnapshotID, rc.bridges)
}

// replaceTails commits rc's replace snapshot on h in tx: indexed files
// (and remainders) in the place of tail files. When Kafka no longer holds
// the same records as when the tail files were built (compaction,
// retention), the rows change: an overwrite, logged.
func (w *Writer) replaceTails(ctx context.Context, tx pgx.Tx, l cluster.Lease, h *commit.Head, rc *roundCommit) error {
	t := h.Table
	c := commit.Change{Op: "replace", Replace: rc.addedRecords == rc.removedRecords}
	if !c.Replace {
		c.Op = "overwrite"
		w.cfg.Logger.Warn("writer: indexed files hold other rows than the tail files they replace",
			"table", t.FullName(), "removed_records", rc.removedRecords, "added_records", rc.addedRecords)
	}
	for _, f := range rc.removeTails {
		c.Removed = append(c.Removed, f.Key)
	}
	for _, f := range rc.replaceFiles {
		c.Added = append(c.Added, f.added(t))
	}
	for _, f := range rc.remainders {
		c.Added = append(c.Added, f.Added(t))
	}
	res, err := commit.Rewrite(ctx, tx, h, &l, writerSummary, c)
	if err != nil {
		return err
	}
	if err := markCommitted(ctx, tx, t, res.SnapshotID, rc.replaceFiles); err != nil {
		return err
	}
	if err := commit.RemoveTailFiles(ctx, tx, t, res.SnapshotID, c.Removed); err != nil {
		return err
	}
	return commit.InsertTailFiles(ctx, tx, t, res.SnapshotID, rc.remainders)
}

// adoptTails lets the indexed data files of the tail files tails take their
// place in tx: committed by the snapshot that added the tail file, whose
// row goes.
func adoptTails(ctx context.Context, tx pgx.Tx, t *tables.Table, tails []*commit.TailFile) error {
	if len(tails) == 0 {
		return nil
	}
	keys := make([]string, len(tails))
	for i, f := range tails {
		keys[i] = f.Key
	}
	rows, err := tx.Query(ctx, tailFilesAdoptSQL, t.ID, keys)
	if err != nil {
		return err
	}
	type adopted struct {
		key     string
		id, seq int64
	}
	done, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (adopted, error) {
		var a adopted
		err := r.Scan(&a.key, &a.id, &a.seq)
		return a, err
	})
	if err != nil {
		return err
	}
	if len(done) != len(keys) {
		return fmt.Errorf("writer: %d of %d tail files of %s to adopt were no longer live", len(keys)-len(done), len(keys), t.FullName())
	}
	for _, a := range done {
		tag, err := tx.Exec(ctx, dataFileAdoptSQL, t.ID, a.key, a.id, a.seq)
		if err != nil {
			return err
		}
		if tag.RowsAffected() != 1 {
			return fmt.Errorf("writer: data file %s of %s is not an uncommitted indexed file", a.key, t.FullName())
		}
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
