package writer

import (
	"context"
	_ "embed"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/minkhq/mink/commit"
	"github.com/minkhq/mink/datafile"
	"github.com/minkhq/mink/icebergmeta"
	"github.com/minkhq/mink/kafka"
	"github.com/minkhq/mink/pgstore"
	"github.com/minkhq/mink/rangefile"
	"github.com/minkhq/mink/schemas"
	"github.com/minkhq/mink/tables"
)

var (
	//go:embed sql/repair_ranges.sql
	repairRangesSQL string
	//go:embed sql/data_file_key_used.sql
	dataFileKeyUsedSQL string
)

// repairSummary marks the snapshots of a repair.
var repairSummary = map[string]string{icebergmeta.SummaryCommittedBy: icebergmeta.CommittedByRepair}

// Repair limits.
const (
	// DefaultRepairLimit is how many ranges one Repair call examines when
	// RepairOptions.Limit is 0.
	DefaultRepairLimit = 50
	// MaxRepairLimit bounds RepairOptions.Limit: each range is read from
	// Kafka and built in the call.
	MaxRepairLimit = 1000
)

// Position is a range of a partition by its start offset: where a batch
// of Repair stopped.
type Position struct {
	Partition int32 `json:"partition"`
	Offset    int64 `json:"offset"`
}

// RepairOptions bound one Repair call.
type RepairOptions struct {
	// Limit is the most ranges the call examines: 0 means
	// DefaultRepairLimit; at most MaxRepairLimit.
	Limit int
	// After, when set, makes the call examine only ranges after it (by
	// partition, then start offset): the Next of the previous call, so
	// that a repair in batches visits every range once.
	After *Position
}

// RepairResult is what one Repair call did. Counts of ranges and of
// records; records are dead letters (rows of the dead-letter table) unless
// said otherwise.
type RepairResult struct {
	// SchemaID is the table's newest schema version, which repaired
	// ranges are rebuilt with.
	SchemaID int `json:"schema_id"`
	// Examined ranges, in this batch: dead-letter files older than
	// SchemaID, and table files of a default-gap version
	// (tables.DefaultGap).
	Examined int `json:"examined"`
	// Repaired ranges: committed, in the table and in its dead-letter
	// table, in one transaction. Records moved from the dead-letter table
	// to the table.
	Repaired int   `json:"repaired"`
	Records  int64 `json:"records"`
	// DefaultRanges are the repaired ranges whose table file was encoded
	// with a default-gap version: a version lacking a column to which
	// SchemaID gives an Avro default, which the file so read as null.
	// DefaultRows are the rows of their rebuilt table files, which now
	// hold the defaults where their writers lacked the columns.
	DefaultRanges int   `json:"default_ranges"`
	DefaultRows   int64 `json:"default_rows"`
	// DeadLetters the newest schema still does not decode, in the
	// examined ranges (repaired or not).
	DeadLetters int64 `json:"dead_letters"`
	// Unrepairable dead letters, in UnrepairableRanges: Kafka's log start
	// offset is past the start of their range, so the range cannot be
	// rebuilt whole.
	Unrepairable       int64 `json:"unrepairable"`
	UnrepairableRanges int   `json:"unrepairable_ranges"`
	// Pending ranges whose table side is not settled (its data file not
	// committed yet, a zero-lag tail file over it, or a commit that
	// changed it during the repair): skipped, a later repair takes them.
	Pending int `json:"pending"`
	// Remaining ranges after this batch (past Limit); Next is where the
	// next batch starts (nil when none remain).
	Remaining int       `json:"remaining"`
	Next      *Position `json:"next,omitempty"`
	// TableSnapshotID and DLQSnapshotID are the snapshots the repair
	// committed (nil when it committed none in that table).
	TableSnapshotID *int64 `json:"table_snapshot_id,omitempty"`
	DLQSnapshotID   *int64 `json:"dlq_snapshot_id,omitempty"`
}

// repairRange is a range repair_ranges.sql returned.
type repairRange struct {
	partition  int32
	start, end int64
	// dlqKey is the dead-letter table's live data file of the range (""
	// when none), of dlqRecords rows; dlqCommitted says whether a
	// snapshot holds it.
	dlqKey       string
	dlqRecords   int64
	dlqCommitted bool
	// tableKey is the table's live data file of the range ("" when none);
	// tableCommitted says whether a snapshot holds it; gap, whether it
	// was encoded with a default-gap version.
	tableKey       string
	tableCommitted bool
	gap            bool
	// misaligned: a live data file of the table overlaps the range with
	// other offsets; tails: a live tail file of either table overlaps it.
	misaligned, tails bool
}

// settled reports whether r's table side is what its dead-letter side
// says: every record of the range is in the current snapshot of exactly
// one of the two tables, in the files r names, below both content ends.
func (r *repairRange) settled(tableEnds, dlqEnds map[int32]int64) bool {
	return (r.tableKey == "" || r.tableCommitted) && (r.dlqKey == "" || r.dlqCommitted) && !r.misaligned && !r.tails &&
		r.end <= tableEnds[r.partition] && r.end <= dlqEnds[r.partition]
}

// repairedRange is a range rebuilt with the newest version that holds
// fewer dead letters than its committed file.
type repairedRange struct {
	repairRange
	table, dlq *commit.DataFile // nil: no row there
}

// Repair rebuilds the ranges of table t (not a dead-letter table) whose
// dead letters t's newest schema version now decodes (docs/design.md
// §4.7): after `mink table alter`, or a registry schema that maps to a
// newer version; and the ranges whose table file reads null for a column
// that the newest version gives an Avro default (Avro spec 1.12, "Schema
// Resolution": a field the writer lacks takes the reader's default),
// because the file was encoded with a version without the column
// (tables.DefaultGaps; Iceberg format v2 has no `initial-default`). t is
// read again by id.
//
// It examines, by partition and offset, up to opts.Limit ranges: those
// of the live committed files of t's dead-letter table encoded with an
// older schema version, and of t's live committed files encoded with a
// default-gap version (so a repeated repair finds nothing new), each with
// both tables' live files of the range:
//
//   - a range whose start is below Kafka's log start offset cannot be
//     rebuilt whole: its dead letters are counted Unrepairable;
//   - a range whose table side is not settled (t's file of the range not
//     committed yet, a live tail file over it, a content end below its
//     end) is Pending;
//   - otherwise it is read from Kafka and built with the newest version;
//     when the new dead-letter file holds fewer rows than the old one,
//     or, for a default-gap range, no more rows (DefaultRanges), the
//     range is repaired.
//
// All repaired ranges of one call are committed in one Postgres
// transaction that holds t's row lock and then its dead-letter table's
// (the order of every commit that takes both): per table one snapshot
// (summary mink.committed-by = repair; "overwrite", or "append" when t
// had no file to remove, "delete" when nothing is added) removes the old
// files and adds the rebuilt ones (keys naming the newest version, the
// next generation of the range when the key was ever used), and the
// data_files rows follow. A reader so sees every record of a range in
// exactly one of the two tables, before and after: never lost, never
// twice. The ranges are checked again under the locks; one that changed
// meanwhile is Pending. No lease is needed: the row locks serialize the
// repair with the writer and table loads, as for a load's commit; a
// writer's expiry planned on the old files fails its commit once and
// plans again.
//
// Errors: tables.ErrInvalid for a dead-letter table; errors wrapping
// outage.ErrUnavailable when Kafka, Postgres or the registry cannot be
// reached (nothing is committed); commit errors (nothing is committed,
// run it again).
func Repair(ctx context.Context, pool *pgxpool.Pool, kc *kafka.Client, store *schemas.Store, t *tables.Table, opts RepairOptions, log *slog.Logger) (*RepairResult, error) {
	if log == nil {
		log = slog.Default()
	}
	limit := opts.Limit
	switch {
	case limit == 0:
		limit = DefaultRepairLimit
	case limit < 0 || limit > MaxRepairLimit:
		return nil, fmt.Errorf("%w: repair limit must be between 1 and %d, not %d", tables.ErrInvalid, MaxRepairLimit, limit)
	}
	t, err := tables.Get(ctx, pool, t.ID)
	if err != nil {
		return nil, pgstore.Unavailable(err)
	}
	if t.DLQOf != nil {
		return nil, fmt.Errorf("%w: %s is a dead-letter table: repair the table it holds the dead letters of", tables.ErrInvalid, t.FullName())
	}
	dlq, err := tables.DLQ(ctx, pool, t.ID)
	if err != nil {
		return nil, pgstore.Unavailable(err)
	}
	res := &RepairResult{SchemaID: t.Schema.ID}
	after := Position{-1, -1}
	if opts.After != nil {
		after = *opts.After
	}
	gaps, err := tables.DefaultGaps(ctx, pool, []int64{t.ID})
	if err != nil {
		return nil, pgstore.Unavailable(err)
	}
	gap := gaps[t.ID].Versions
	ranges, total, err := repairRanges(ctx, pool, dlq, t, gap, after, limit, nil)
	if err != nil || len(ranges) == 0 {
		return res, pgstore.Unavailable(err)
	}
	res.Examined, res.Remaining = len(ranges), total-len(ranges)
	if res.Remaining > 0 {
		last := ranges[len(ranges)-1]
		res.Next = &Position{last.partition, last.start}
	}
	offs, err := kc.ListOffsets(ctx, t.Topic)
	if err != nil {
		return nil, err
	}
	tableEnds, dlqEnds, err := contentEnds(ctx, pool, t, dlq)
	if err != nil {
		return nil, pgstore.Unavailable(err)
	}
	var todo []*repairedRange
	for _, r := range ranges {
		o, ok := offs[r.partition]
		switch {
		case !ok:
			res.Pending++ // Kafka's metadata does not list the partition now
			continue
		case r.start < o.LogStart:
			res.UnrepairableRanges++
			res.Unrepairable += r.dlqRecords
			continue
		case !r.settled(tableEnds, dlqEnds):
			res.Pending++
			continue
		}
		rr, err := rebuildRange(ctx, kc, store, t, r, res.SchemaID)
		if err != nil {
			return nil, err
		}
		if rr == nil {
			res.DeadLetters += r.dlqRecords
			continue
		}
		todo = append(todo, rr)
	}
	if len(todo) == 0 {
		return res, nil
	}
	// The log start only moves forward: a range that starts at or past it
	// now was whole in Kafka while it was read.
	if offs, err = kc.ListOffsets(ctx, t.Topic); err != nil {
		return nil, err
	}
	whole := todo[:0]
	for _, rr := range todo {
		if rr.start < offs[rr.partition].LogStart {
			res.UnrepairableRanges++
			res.Unrepairable += rr.dlqRecords
			continue
		}
		whole = append(whole, rr)
	}
	if todo = whole; len(todo) == 0 {
		return res, nil
	}
	committed, err := commitRepair(ctx, pool, t, dlq, gap, todo, res)
	if err != nil {
		return nil, err
	}
	for _, rr := range todo {
		if !committed[rr] {
			res.Pending++
			continue
		}
		res.Repaired++
		left := rowCount(rr.dlq)
		res.Records += rr.dlqRecords - left
		res.DeadLetters += left
		if rr.gap {
			res.DefaultRanges++
			res.DefaultRows += rowCount(rr.table)
		}
	}
	if res.Repaired > 0 {
		log.Info("repair: committed", "table", t.FullName(), "schema_id", res.SchemaID, "ranges", res.Repaired,
			"records", res.Records, "dead_letters_left", res.DeadLetters,
			"default_ranges", res.DefaultRanges, "default_rows", res.DefaultRows)
	}
	return res, nil
}

// rowCount is the row count of f (0 for nil).
func rowCount(f *commit.DataFile) int64 {
	if f == nil {
		return 0
	}
	return f.File.Stats.RecordCount
}

// repairRanges runs repair_ranges.sql: the ranges of t and dlq to examine
// after a position (or only the ranges of only, when it is not nil), gap
// being t's default-gap versions, and how many match before the limit.
func repairRanges(ctx context.Context, q tables.Querier, dlq, t *tables.Table, gap []int, after Position, limit int, only []*repairedRange) ([]*repairRange, int, error) {
	var parts []int32
	var starts []int64
	if only != nil {
		parts, starts = []int32{}, []int64{}
		for _, r := range only {
			parts, starts = append(parts, r.partition), append(starts, r.start)
		}
	}
	if gap == nil {
		gap = []int{}
	}
	rows, err := q.Query(ctx, repairRangesSQL, dlq.ID, t.ID, t.Schema.ID, after.Partition, after.Offset, limit, parts, starts, gap)
	if err != nil {
		return nil, 0, err
	}
	total := 0
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*repairRange, error) {
		r := &repairRange{}
		var dlqKey, tableKey *string
		err := row.Scan(&r.partition, &r.start, &r.end, &dlqKey, &r.dlqRecords, &r.dlqCommitted, &tableKey,
			&r.tableCommitted, &r.gap, &r.misaligned, &r.tails, &total)
		if dlqKey != nil {
			r.dlqKey = *dlqKey
		}
		if tableKey != nil {
			r.tableKey = *tableKey
		}
		return r, err
	})
	return out, total, err
}

// contentEnds reads the content ends of t and dlq (commit.Head.Ends).
func contentEnds(ctx context.Context, pool *pgxpool.Pool, t, dlq *tables.Table) (tableEnds, dlqEnds map[int32]int64, err error) {
	ht, err := commit.Read(ctx, pool, t, t)
	if err != nil {
		return nil, nil, err
	}
	hd, err := commit.Read(ctx, pool, dlq, t)
	if err != nil {
		return nil, nil, err
	}
	return ht.Ends, hd.Ends, nil
}

// rebuildRange reads r from Kafka and builds it with schema version v. It
// returns nil unless the new dead-letter file holds fewer rows than r's,
// or, for a default-gap range, no more (filling defaults never costs a
// record its row).
func rebuildRange(ctx context.Context, kc *kafka.Client, store *schemas.Store, t *tables.Table, r *repairRange, v int) (*repairedRange, error) {
	recs, err := kc.ReadRange(ctx, t.Topic, r.partition, r.start, r.end)
	if err != nil {
		return nil, err
	}
	built, _, err := rangefile.Encode(ctx, store, t, recs, v)
	if err != nil {
		return nil, fmt.Errorf("repair: build %s partition %d [%d, %d): %w", t.FullName(), r.partition, r.start, r.end, err)
	}
	rr := &repairedRange{repairRange: *r}
	for _, f := range []struct {
		dst **commit.DataFile
		f   *datafile.File
	}{{&rr.table, built.Data}, {&rr.dlq, built.DLQ}} {
		if f.f != nil {
			*f.dst = &commit.DataFile{Partition: r.partition, Start: r.start, End: r.end, Schema: v, File: f.f}
		}
	}
	if left := rowCount(rr.dlq); left > r.dlqRecords || (left == r.dlqRecords && !r.gap) {
		return nil, nil
	}
	return rr, nil
}

// commitRepair commits the ranges todo that are still as planned, in one
// transaction under the row locks of t and then dlq, and returns which
// it committed.
func commitRepair(ctx context.Context, pool *pgxpool.Pool, t, dlq *tables.Table, gap []int, todo []*repairedRange, res *RepairResult) (map[*repairedRange]bool, error) {
	var committed map[*repairedRange]bool
	err := pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		committed = map[*repairedRange]bool{}
		res.TableSnapshotID, res.DLQSnapshotID = nil, nil
		ht, err := commit.Lock(ctx, tx, t, t)
		if err != nil {
			return err
		}
		hd, err := commit.Lock(ctx, tx, dlq, t)
		if err != nil {
			return err
		}
		// Again under the locks: a commit since the plan (the writer's
		// expiry, another repair) may have changed a range.
		now, _, err := repairRanges(ctx, tx, dlq, t, gap, Position{-1, -1}, len(todo), todo)
		if err != nil {
			return err
		}
		byStart := map[[2]int64]*repairRange{}
		for _, r := range now {
			byStart[[2]int64{int64(r.partition), r.start}] = r
		}
		var ready []*repairedRange
		for _, rr := range todo {
			r := byStart[[2]int64{int64(rr.partition), rr.start}]
			if r == nil || *r != rr.repairRange || !r.settled(ht.Ends, hd.Ends) {
				continue
			}
			ready = append(ready, rr)
		}
		if len(ready) == 0 {
			return nil
		}
		for _, side := range []struct {
			h   *commit.Head
			old func(*repairedRange) string
			new func(*repairedRange) *commit.DataFile
			id  **int64
		}{
			{ht, func(rr *repairedRange) string { return rr.tableKey }, func(rr *repairedRange) *commit.DataFile { return rr.table }, &res.TableSnapshotID},
			{hd, func(rr *repairedRange) string { return rr.dlqKey }, func(rr *repairedRange) *commit.DataFile { return rr.dlq }, &res.DLQSnapshotID},
		} {
			var removed []string
			var added []*commit.DataFile
			for _, rr := range ready {
				if k := side.old(rr); k != "" {
					removed = append(removed, k)
				}
				if f := side.new(rr); f != nil {
					added = append(added, f)
				}
			}
			id, err := repairCommit(ctx, tx, side.h, removed, added)
			if err != nil {
				return err
			}
			*side.id = id
		}
		for _, rr := range ready {
			committed[rr] = true
		}
		return nil
	})
	if err != nil {
		return nil, pgstore.Unavailable(err)
	}
	return committed, nil
}

// repairCommit commits, on h in tx, one snapshot of h's table that removes
// the files removed and adds added, and the data_files rows that follow.
// It returns the snapshot id (nil when there is nothing to commit).
func repairCommit(ctx context.Context, tx pgx.Tx, h *commit.Head, removed []string, added []*commit.DataFile) (*int64, error) {
	t := h.Table
	if len(removed) == 0 && len(added) == 0 {
		return nil, nil
	}
	files, err := claimKeys(ctx, tx, t, added)
	if err != nil {
		return nil, err
	}
	var res *icebergmeta.CommitResult
	if len(removed) == 0 {
		res, err = commit.Append(ctx, tx, h, nil, repairSummary, files)
	} else {
		c := commit.Change{Op: "overwrite", Removed: removed, Added: files}
		if len(files) == 0 {
			c.Op = "delete"
		}
		res, err = commit.Rewrite(ctx, tx, h, nil, repairSummary, c)
	}
	if err != nil {
		return nil, err
	}
	if err := swapDataFiles(ctx, tx, t, res.SnapshotID, removed, added); err != nil {
		return nil, err
	}
	return &res.SnapshotID, nil
}
