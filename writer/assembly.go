package writer

import (
	"cmp"
	"context"
	_ "embed"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/minkhq/mink/cluster"
	"github.com/minkhq/mink/commit"
	"github.com/minkhq/mink/datafile"
	"github.com/minkhq/mink/kafka"
	"github.com/minkhq/mink/rangefile"
	"github.com/minkhq/mink/tables"
)

var (
	//go:embed sql/assembly_files.sql
	assemblyFilesSQL string
	//go:embed sql/assembly_check.sql
	assemblyCheckSQL string
)

// assemblyBudget bounds what one assembly pass rebuilds: groups are taken
// in offset order until their bytes reach assemblyBudget × the target
// (docs/design.md §4.6), so a backlog of small files delays the writer's
// commits by a few builds per pass, not by the whole backlog.
const assemblyBudget = 4

// assemblyFile is a live data file of a table or of its dead-letter table
// (assembly_files.sql).
type assemblyFile struct {
	dlq                     bool
	key                     string
	partition               int32
	start, end              int64
	size, records           int64
	schema, encoder         int
	needsRebuild, committed bool
}

// span is one indexed range of a partition with its live data files: the
// table's, the dead-letter table's, or both (an indexed range has the
// same offsets in both tables). size is the bytes of both.
type span struct {
	partition  int32
	start, end int64
	table, dlq *assemblyFile
	size       int64
	schema     int
	// ok says the span may be assembled: its files are committed, of
	// this encoder version, of one schema version, not marked for
	// re-indexing, above Kafka's log start, below both content ends, and
	// no other live file or tail file overlaps it.
	ok bool
}

// assemblyLimits are what spans checks a partition's files against.
type assemblyLimits struct {
	// logStart and the content ends of the table and of its dead-letter
	// table, by partition.
	logStart, tableEnds, dlqEnds map[int32]int64
	// tails are the live tail files of both tables.
	tails []*commit.TailFile
}

// spans pairs files (by partition, offset and table, the table first) into
// spans, by partition and offset, and says which may be assembled (span.ok).
func spans(files []assemblyFile, lim assemblyLimits) []span {
	var out []span
	for i := range files {
		f := &files[i]
		if n := len(out); n > 0 {
			last := &out[n-1]
			if last.partition == f.partition && last.start == f.start && last.end == f.end && f.dlq && last.dlq == nil {
				last.dlq, last.size = f, last.size+f.size
				continue
			}
		}
		s := span{partition: f.partition, start: f.start, end: f.end, size: f.size, schema: f.schema}
		if f.dlq {
			s.dlq = f
		} else {
			s.table = f
		}
		out = append(out, s)
	}
	reach := -1 // the span reaching furthest in the partition so far
	for i := range out {
		s := &out[i]
		if i == 0 || out[i-1].partition != s.partition {
			reach = -1
		}
		o, ok := lim.logStart[s.partition]
		s.ok = ok && s.start >= o && s.end <= lim.tableEnds[s.partition] && s.end <= lim.dlqEnds[s.partition]
		for _, f := range []*assemblyFile{s.table, s.dlq} {
			if f != nil && (!f.committed || f.needsRebuild || f.encoder != datafile.EncoderVersion || f.schema != s.schema) {
				s.ok = false
			}
		}
		// Overlapping spans (files of one table and of the other that do
		// not align) are left alone.
		if reach >= 0 && out[reach].end > s.start {
			s.ok, out[reach].ok = false, false
		}
		if reach < 0 || s.end > out[reach].end {
			reach = i
		}
		for _, tl := range lim.tails {
			if tl.Partition == s.partition && tl.Start < s.end && tl.End > s.start {
				s.ok = false
			}
		}
	}
	return out
}

// planAssembly groups spans (of one or more partitions, by partition and
// offset) for assembly (docs/design.md §4.6): it walks each partition's
// spans in offset order and adds each to the open group when it joins it
// (the same partition, the same schema version, starting where the group
// ends, both ok); a span that does not join closes the group and opens the
// next. A group closes as soon as its bytes reach target. Only groups of
// two or more spans are returned: each becomes one file.
//
// Bound: among spans that are all ok, contiguous and of one schema
// version, every closed group holds at least target bytes and only the
// last one may hold less, so after assembly the partition holds at most
// floor(bytes/target) + 1 ≤ ceil(bytes/target) + 1 files per table. A
// span of target bytes or more with no open group before it stays alone
// (never rebuilt again); one that follows an open group closes it.
func planAssembly(ss []span, target int64) [][]span {
	var groups [][]span
	var cur []span
	var size int64
	closeGroup := func() {
		if len(cur) >= 2 {
			groups = append(groups, cur)
		}
		cur, size = nil, 0
	}
	for _, s := range ss {
		if !s.ok {
			closeGroup()
			continue
		}
		if n := len(cur); n > 0 {
			last := cur[n-1]
			if last.partition != s.partition || last.end != s.start || last.schema != s.schema {
				closeGroup()
			}
		}
		cur = append(cur, s)
		if size += s.size; size >= target {
			closeGroup()
		}
	}
	closeGroup()
	return groups
}

// assembled is one group rebuilt: the data files of its joint range in the
// table and in the dead-letter table (nil: no row there).
type assembled struct {
	group      []span
	table, dlq *commit.DataFile
}

// assemble is the writer's assembly duty (docs/design.md §4.6) for table t
// and its dead-letter table dlq: it plans groups of adjacent small spans
// (planAssembly) with t's target file size (tables.PropTargetFileSize),
// rebuilds each group's joint range from Kafka with the group's schema
// version (one read gives both tables' files), and commits them (flushing
// when the rebuilt bytes held reach the target, to bound memory). A pass
// rebuilds at most assemblyBudget × target bytes, from partition *from on,
// and sets *from to where the next pass starts (passPlan).
func (w *Writer) assemble(ctx context.Context, l cluster.Lease, t, dlq *tables.Table, from *int32) error {
	if dlq == nil {
		return nil
	}
	ss, err := w.assemblySpans(ctx, t, dlq)
	if err != nil {
		return err
	}
	target := t.TargetFileSize()
	var held []*assembled
	var heldBytes int64
	groups, next := passPlan(ss, target, *from)
	*from = next
	for _, g := range groups {
		a, err := w.rebuildGroup(ctx, t, g)
		if err != nil {
			return err
		}
		held = append(held, a)
		for _, f := range []*commit.DataFile{a.table, a.dlq} {
			if f != nil {
				heldBytes += int64(len(f.File.Bytes))
			}
		}
		if heldBytes >= target {
			if err := w.commitAssembly(ctx, l, t, dlq, held); err != nil {
				return err
			}
			held, heldBytes = nil, 0
		}
	}
	if len(held) == 0 {
		return nil
	}
	return w.commitAssembly(ctx, l, t, dlq, held)
}

// passPlan is what one assembly pass rebuilds of spans ss: the groups of
// planAssembly, from partition from on (then the partitions below it, in
// order), taken until their bytes reach assemblyBudget × target. next is
// the partition the following pass starts from: the first one whose groups
// this pass did not all take, so every partition is assembled wholly in
// turn however many need it. Taken in plain partition order, the first
// partitions' open last groups, rebuilt each pass they grow, used the
// whole budget and a later partition's files piled up without bound (a
// trial found 1,150 files in partition 5 of 6).
func passPlan(ss []span, target int64, from int32) (groups [][]span, next int32) {
	all := planAssembly(ss, target)
	slices.SortStableFunc(all, func(a, b []span) int {
		pa, pb := a[0].partition, b[0].partition
		return cmp.Or(cmp.Compare(boolInt(pa < from), boolInt(pb < from)), cmp.Compare(pa, pb))
	})
	var built int64
	for i, g := range all {
		if built >= assemblyBudget*target {
			return groups, all[i][0].partition
		}
		groups = append(groups, g)
		for _, s := range g {
			built += s.size
		}
	}
	return groups, from
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// assemblySpans reads, in one database snapshot, the live data files of t
// and dlq, their content ends and live tail files, and Kafka's log start
// offsets, and returns the spans (spans).
func (w *Writer) assemblySpans(ctx context.Context, t, dlq *tables.Table) ([]span, error) {
	offs, err := w.kafka.ListOffsets(ctx, t.Topic)
	if err != nil {
		return nil, err
	}
	lim := assemblyLimits{logStart: logStarts(offs)}
	var files []assemblyFile
	err = pgx.BeginTxFunc(ctx, w.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		ht, err := commit.ReadIn(ctx, tx, t, t)
		if err != nil {
			return err
		}
		hd, err := commit.ReadIn(ctx, tx, dlq, t)
		if err != nil {
			return err
		}
		lim.tableEnds, lim.dlqEnds = ht.Ends, hd.Ends
		for _, x := range []*tables.Table{t, dlq} {
			tails, err := commit.LiveTailFiles(ctx, tx, x)
			if err != nil {
				return err
			}
			lim.tails = append(lim.tails, tails...)
		}
		rows, err := tx.Query(ctx, assemblyFilesSQL, t.ID, dlq.ID)
		if err != nil {
			return err
		}
		files, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (assemblyFile, error) {
			var f assemblyFile
			err := r.Scan(&f.dlq, &f.key, &f.partition, &f.start, &f.end, &f.size, &f.records, &f.schema,
				&f.encoder, &f.needsRebuild, &f.committed)
			return f, err
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	return spans(files, lim), nil
}

func logStarts(offs map[int32]kafka.Offsets) map[int32]int64 {
	out := make(map[int32]int64, len(offs))
	for p, o := range offs {
		out[p] = o.LogStart
	}
	return out
}

// rebuildGroup reads g's joint range [first start, last end) from Kafka
// and encodes it with g's schema version: the same bytes any node's
// rebuild of that key produces.
func (w *Writer) rebuildGroup(ctx context.Context, t *tables.Table, g []span) (*assembled, error) {
	p, start, end, v := g[0].partition, g[0].start, g[len(g)-1].end, g[0].schema
	recs, err := w.kafka.ReadRange(ctx, t.Topic, p, start, end)
	if err != nil {
		return nil, err
	}
	res, _, err := rangefile.Encode(ctx, w.cfg.Schemas, t, recs, v)
	if err != nil {
		return nil, fmt.Errorf("writer: assemble %s partition %d [%d, %d): %w", t.FullName(), p, start, end, err)
	}
	a := &assembled{group: g}
	if res.Data != nil {
		a.table = &commit.DataFile{Partition: p, Start: start, End: end, Schema: v, File: res.Data}
	}
	if res.DLQ != nil {
		a.dlq = &commit.DataFile{Partition: p, Start: start, End: end, Schema: v, File: res.DLQ}
	}
	return a, nil
}

// keys are the keys of a's group's files in the table (dlq false) or in
// the dead-letter table, and their records.
func (a *assembled) keys(dlq bool) (keys []string, records int64) {
	for _, s := range a.group {
		f := s.table
		if dlq {
			f = s.dlq
		}
		if f != nil {
			keys, records = append(keys, f.key), records+f.records
		}
	}
	return keys, records
}

// commitAssembly commits the groups held in one transaction that holds
// t's row lock and then dlq's (the order of every commit that takes both),
// fenced by the writer epoch: per table one snapshot that removes the
// groups' files and adds the rebuilt ones ("replace", the same rows; an
// "overwrite", logged, when Kafka no longer holds the same records), and
// the data_files rows. A group that changed since the plan (a repair, a
// load, another commit) is skipped; the next pass plans again.
func (w *Writer) commitAssembly(ctx context.Context, l cluster.Lease, t, dlq *tables.Table, held []*assembled) error {
	var done []*assembled
	snapshots := map[*tables.Table]int64{}
	err := commit.InLock(ctx, w.pool, t, t, func(tx pgx.Tx, ht *commit.Head) error {
		hd, err := commit.Lock(ctx, tx, dlq, t)
		if err != nil {
			return err
		}
		done = nil
		for _, a := range held {
			ok, err := a.stillPlanned(ctx, tx, t, dlq)
			if err != nil {
				return err
			}
			if ok {
				done = append(done, a)
			}
		}
		for _, side := range []struct {
			h   *commit.Head
			dlq bool
		}{{ht, false}, {hd, true}} {
			id, err := w.assemblyCommit(ctx, tx, l, side.h, side.dlq, done)
			if err != nil {
				return err
			}
			if id != nil {
				snapshots[side.h.Table] = *id
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, a := range done {
		for _, x := range []*tables.Table{t, dlq} {
			if keys, _ := a.keys(x == dlq); len(keys) > 0 {
				w.assembled.WithLabelValues(x.FullName()).Add(float64(len(keys)))
			}
		}
	}
	for x, id := range snapshots {
		w.commits.WithLabelValues(x.FullName()).Inc()
		w.cfg.Logger.Debug("writer: assembled data files", "table", x.FullName(), "snapshot_id", id, "groups", len(done))
	}
	return nil
}

// stillPlanned reports, in tx under both row locks, whether a's files are
// still live and committed and no other live file overlaps its range
// (assembly_check.sql).
func (a *assembled) stillPlanned(ctx context.Context, tx pgx.Tx, t, dlq *tables.Table) (bool, error) {
	tk, _ := a.keys(false)
	dk, _ := a.keys(true)
	keys := append(tk, dk...)
	g := a.group
	var live, others int
	if err := tx.QueryRow(ctx, assemblyCheckSQL, t.ID, dlq.ID, g[0].partition, g[0].start, g[len(g)-1].end, keys).Scan(&live, &others); err != nil {
		return false, err
	}
	return live == len(keys) && others == 0 && a.sided(false) && a.sided(true), nil
}

// sided reports whether a's rebuild adds files to one side (the table, or
// the dead-letter table when dlq) only where the group had files there:
// rows where a table had none would need a change of the other table that
// the rebuild does not explain, so such a group is not committed.
func (a *assembled) sided(dlq bool) bool {
	keys, _ := a.keys(dlq)
	f := a.table
	if dlq {
		f = a.dlq
	}
	return f == nil || len(keys) > 0
}

// assemblyCommit commits, on h in tx, the snapshot of one side (the table,
// or the dead-letter table when dlq) of the groups done, and the data_files
// rows that follow. It returns the snapshot id (nil when that side has
// nothing to change).
func (w *Writer) assemblyCommit(ctx context.Context, tx pgx.Tx, l cluster.Lease, h *commit.Head, dlq bool, done []*assembled) (*int64, error) {
	t := h.Table
	var removed []string
	var added []*commit.DataFile
	var removedRecords, addedRecords int64
	for _, a := range done {
		keys, n := a.keys(dlq)
		removed, removedRecords = append(removed, keys...), removedRecords+n
		f := a.table
		if dlq {
			f = a.dlq
		}
		if f != nil {
			added, addedRecords = append(added, f), addedRecords+f.File.Stats.RecordCount
		}
	}
	if len(removed) == 0 { // nothing added either (sided)
		return nil, nil
	}
	c := commit.Change{Op: "replace", Removed: removed, Replace: addedRecords == removedRecords}
	switch {
	case len(added) == 0:
		c.Op = "delete"
	case !c.Replace:
		c.Op = "overwrite"
	}
	if !c.Replace {
		w.cfg.Logger.Warn("writer: assembled files hold other rows than the files they replace (Kafka compacted or deleted records)",
			"table", t.FullName(), "removed_records", removedRecords, "added_records", addedRecords)
	}
	files, err := claimKeys(ctx, tx, t, added)
	if err != nil {
		return nil, err
	}
	c.Added = files
	res, err := commit.Rewrite(ctx, tx, h, &l, writerSummary, c)
	if err != nil {
		return nil, err
	}
	if err := swapDataFiles(ctx, tx, t, res.SnapshotID, removed, added); err != nil {
		return nil, err
	}
	return &res.SnapshotID, nil
}
