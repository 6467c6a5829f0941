// Package tail makes table loads zero-lag (docs/design.md §4.4). A load
// compares the table's content ends (package commit) with the last stable
// offsets of its topic; when Kafka holds records past them, the serving
// node builds tail data files for the missing ranges, commits them as an
// append snapshot on the table's branch main, and answers that snapshot.
//
// The snapshot a load hands out is part of the table's history like any
// other: it stays in snapshots and snapshot-log until it expires, every
// later snapshot descends from it (the writer later replaces its tail files
// by indexed data files with a replace snapshot, which adds no row), and
// its sequence number is never reused. Streaming and incremental readers,
// which require the last snapshot they read to be an ancestor of the next,
// can follow the table.
//
// Every record acknowledged before the load is in the snapshot it returns:
// a producer's acknowledged record is below the last stable offset (for
// read_committed, once its transaction commits), read before the head, and
// the tail starts where the head's content ends, per partition, so there is
// no gap and no overlap. Loads of one table on one node extend it one at
// a time: those that arrive while an extension runs share the next one
// (group commit), so a burst of loads holds one Postgres connection per
// table and node, not one per load. Loads on several nodes at once
// serialize on the table's row lock; a load that finds the table already
// extended past its offsets commits nothing and answers the newer head.
package tail

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"

	"github.com/minkhq/mink/catalog"
	"github.com/minkhq/mink/commit"
	"github.com/minkhq/mink/icebergmeta"
	"github.com/minkhq/mink/kafka"
	"github.com/minkhq/mink/outage"
	"github.com/minkhq/mink/pgstore"
	"github.com/minkhq/mink/rangefile"
	"github.com/minkhq/mink/schemas"
	"github.com/minkhq/mink/tables"
)

// Loader implements catalog.Loader.
type Loader struct {
	pool  *pgxpool.Pool
	kafka *kafka.Client
	cfg   Config

	mu      sync.Mutex
	flights map[int64]*tableFlights // by table id

	files     prometheus.Counter // tail files committed
	built     prometheus.Counter // their bytes
	snapshots prometheus.Counter // snapshots committed by loads
	conflicts prometheus.Counter // plans that another commit overtook
}

// New returns a Loader.
func New(pool *pgxpool.Pool, kc *kafka.Client, cfg Config) *Loader {
	cfg = cfg.WithDefaults()
	if cfg.Schemas == nil {
		cfg.Schemas = schemas.NewStore(pool, nil)
	}
	l := &Loader{pool: pool, kafka: kc, cfg: cfg, flights: map[int64]*tableFlights{},
		files: prometheus.NewCounter(prometheus.CounterOpts{Name: "mink_tail_files_total",
			Help: "Tail data files committed by zero-lag table loads."}),
		built: prometheus.NewCounter(prometheus.CounterOpts{Name: "mink_tail_build_bytes_total",
			Help: "Bytes of the tail data files committed by zero-lag table loads."}),
		snapshots: prometheus.NewCounter(prometheus.CounterOpts{Name: "mink_load_snapshots_total",
			Help: "Snapshots committed by zero-lag table loads."}),
		conflicts: prometheus.NewCounter(prometheus.CounterOpts{Name: "mink_load_commit_conflicts_total",
			Help: "Zero-lag load commits whose plan another commit overtook (planned again)."}),
	}
	if cfg.Registerer != nil {
		for _, c := range []prometheus.Collector{l.files, l.built, l.snapshots, l.conflicts} {
			if err := cfg.Registerer.Register(c); err != nil {
				cfg.Logger.Warn("tail metrics", "err", err)
			}
		}
	}
	return l
}

// tailRange is a range of one partition past a table's content end.
type tailRange struct {
	partition  int32
	start, end int64
}

// tailOf returns the ranges between the content ends and Kafka's last
// stable offsets, by partition. A tail never starts below Kafka's log start
// (retention, DeleteRecords): those records are gone, and a file of them
// could not be rebuilt.
func tailOf(ends map[int32]int64, offs map[int32]kafka.Offsets) []tailRange {
	var tail []tailRange
	for p, end := range ends {
		if o, ok := offs[p]; ok && o.LastStable > max(end, o.LogStart) {
			tail = append(tail, tailRange{partition: p, start: max(end, o.LogStart), end: o.LastStable})
		}
	}
	slices.SortFunc(tail, func(a, b tailRange) int { return int(a.partition - b.partition) })
	return tail
}

// LoadTable returns the table's head when it holds every record Kafka can
// serve, else the snapshot that extends it to the last stable offsets,
// committed now. Errors wrap outage.ErrUnavailable when Kafka or Postgres
// cannot be reached.
func (l *Loader) LoadTable(ctx context.Context, committed catalog.Table) (catalog.Table, error) {
	t, err := tables.Get(ctx, l.pool, committed.ID)
	if err != nil {
		return committed, pgstore.Unavailable(err)
	}
	src, err := tables.Source(ctx, l.pool, t)
	if err != nil {
		return committed, pgstore.Unavailable(err)
	}
	// Read Kafka first: every record acknowledged before this load is
	// below these offsets, whatever is committed meanwhile.
	offs, err := l.kafka.ListOffsets(ctx, src.Topic)
	if err != nil {
		return committed, outage.Mark(err)
	}
	h, err := commit.Read(ctx, l.pool, t, src)
	if err != nil {
		return committed, pgstore.Unavailable(err)
	}
	if added, err := l.addPartitions(ctx, src, h, offs); err != nil {
		return committed, pgstore.Unavailable(err)
	} else if added {
		if h, err = commit.Read(ctx, l.pool, t, src); err != nil {
			return committed, pgstore.Unavailable(err)
		}
	}
	out := committed
	if tail := tailOf(h.Ends, offs); len(tail) > 0 {
		if h, err = l.extendShared(ctx, h, offs); err != nil {
			return committed, pgstore.Unavailable(err)
		}
	}
	out.MetadataLocation, out.Metadata = h.MetadataLocation, h.Metadata
	return out, nil
}

// flight is one extension of a table that loads of this node share. Its
// offsets are, per partition, the newest its loads read (each read after
// its load arrived), so its commit holds every record acknowledged before
// any of them.
type flight struct {
	base *commit.Head // the head a first flight extends; a queued one reads its own
	offs map[int32]kafka.Offsets
	done chan struct{}
	head *commit.Head // the head after it, when err is nil
	err  error
}

// tableFlights are a table's extension on this node: the one running and
// the one that loads arriving meanwhile join, which starts when it ends.
type tableFlights struct {
	running, next *flight
}

// covers says every partition of offs is at or below f's last stable
// offset: f's commit holds what a load that read offs needs.
func (f *flight) covers(offs map[int32]kafka.Offsets) bool {
	for p, o := range offs {
		if fo, ok := f.offs[p]; !ok || fo.LastStable < o.LastStable {
			return false
		}
	}
	return true
}

// extendShared extends the table of base to at least offs in a flight it
// shares with this node's other loads of the table (group commit): the
// running one when its offsets cover offs, else the next one, whose
// offsets grow to cover those of each load that joins before it starts.
// It returns the head after the flight; ctx ends only the wait (the
// flight goes on for the loads that share it).
func (l *Loader) extendShared(ctx context.Context, base *commit.Head, offs map[int32]kafka.Offsets) (*commit.Head, error) {
	id := base.Table.ID
	l.mu.Lock()
	tf := l.flights[id]
	if tf == nil {
		tf = &tableFlights{}
		l.flights[id] = tf
	}
	var f *flight
	switch {
	case tf.running != nil && tf.running.covers(offs):
		f = tf.running
	case tf.next != nil:
		f = tf.next // it reads the head again when it starts (flyOne)
		for p, o := range offs {
			fo := f.offs[p]
			fo.LogStart, fo.LastStable, fo.HighWatermark = max(fo.LogStart, o.LogStart),
				max(fo.LastStable, o.LastStable), max(fo.HighWatermark, o.HighWatermark)
			f.offs[p] = fo
		}
	default:
		f = &flight{base: base, offs: maps.Clone(offs), done: make(chan struct{})}
		if tf.running == nil {
			tf.running = f
			go l.fly(id, f)
		} else {
			tf.next = f
		}
	}
	l.mu.Unlock()
	select {
	case <-f.done:
		return f.head, f.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// flyOne extends f's table to f's offsets. A flight that waited for
// another reads the head again first: its loads read theirs before that
// one committed, and most often it holds their records already.
func (l *Loader) flyOne(ctx context.Context, f *flight, queued bool) (*commit.Head, error) {
	base := f.base
	if queued {
		h, err := commit.Read(ctx, l.pool, base.Table, base.Source)
		if err != nil {
			return nil, err
		}
		if len(tailOf(h.Ends, f.offs)) == 0 {
			return h, nil
		}
		base = h
	}
	return l.extend(ctx, base, f.offs)
}

// fly runs f, then the flight loads joined meanwhile, if any, until none
// is left for the table.
func (l *Loader) fly(id int64, f *flight) {
	ctx := context.Background()
	for queued := false; f != nil; queued = true {
		f.head, f.err = l.flyOne(ctx, f, queued)
		close(f.done)
		l.mu.Lock()
		tf := l.flights[id]
		f, tf.running, tf.next = tf.next, tf.next, nil
		if f == nil {
			delete(l.flights, id)
		}
		l.mu.Unlock()
	}
}

// addPartitions records the partitions Kafka has and the table does not
// know yet (the topic gained partitions), from their log start offset, as
// the writer would at its next partition check: their records are in this
// load, and their leases (created here) start their indexers at once.
func (l *Loader) addPartitions(ctx context.Context, src *tables.Table, h *commit.Head, offs map[int32]kafka.Offsets) (bool, error) {
	var starts []tables.PartitionStart
	for p, o := range offs {
		if _, ok := h.Ends[p]; !ok {
			starts = append(starts, tables.PartitionStart{Partition: p, Offset: o.LogStart})
		}
	}
	if len(starts) == 0 {
		return false, nil
	}
	l.cfg.Logger.Info("tail: the topic gained partitions", "table", src.FullName(), "partitions", len(starts))
	return true, tables.AddPartitions(ctx, l.pool, src.ID, starts)
}

// plannedAttempts is how many times a load builds its tail files before it
// takes the table's row lock; after that it builds what is left under the
// lock, which no other commit can overtake.
const plannedAttempts = 2

// extend commits the tail files that take base's content to offs and
// returns the new head. It builds the files outside the row lock, then
// takes it; when another commit extended a partition meanwhile, it plans
// again from the head it found.
func (l *Loader) extend(ctx context.Context, base *commit.Head, offs map[int32]kafka.Offsets) (*commit.Head, error) {
	t, src := base.Table, base.Source
	built := map[tailRange]*commit.TailFile{}
	have := map[tailRange]bool{}
	for attempt := 0; ; attempt++ {
		underLock := attempt >= plannedAttempts
		if !underLock {
			// Parsed now, outside the lock: the head is most often still
			// this one when the lock is taken (cached by location).
			if _, err := base.Parsed(); err != nil {
				return nil, err
			}
			var err error
			if _, offs, err = l.buildUpTo(ctx, t, src, tailOf(base.Ends, offs), base.Ends, offs, built, have, schemas.Choose); err != nil {
				return nil, err
			}
		}
		h, err := l.store(ctx, base, offs, built, have, underLock)
		if errors.Is(err, errOvertaken) {
			l.conflicts.Inc()
			base = h
			continue
		}
		return h, err
	}
}

// buildUpTo builds tail (see build). When the writer schema of a record
// can be neither read nor fetched (schemas.UnavailableAt: the registry is
// down, or, under the row lock, the schema is not decided yet), it lowers
// that partition's end in offs to the record, takes the tail from ends
// again and builds that: the load answers with each partition up to such
// a record, and the records from it on wait (docs/design.md §4.7). It
// returns the tail built and the offsets it covers.
func (l *Loader) buildUpTo(ctx context.Context, t, src *tables.Table, tail []tailRange, ends map[int32]int64,
	offs map[int32]kafka.Offsets, built map[tailRange]*commit.TailFile, have map[tailRange]bool, version int) (
	[]tailRange, map[int32]kafka.Offsets, error) {
	for {
		err := l.build(ctx, t, src, tail, built, have, version)
		var ua *schemas.UnavailableAt
		if !errors.As(err, &ua) {
			return tail, offs, err
		}
		offs = clampTail(offs, ua.Partition, ua.Offset)
		tail = tailOf(ends, offs)
	}
}

// clampTail returns offs (a copy) with partition p's last stable offset
// lowered to at most offset.
func clampTail(offs map[int32]kafka.Offsets, p int32, offset int64) map[int32]kafka.Offsets {
	out := make(map[int32]kafka.Offsets, len(offs))
	for q, o := range offs {
		if q == p && o.LastStable > offset {
			o.LastStable = offset
		}
		out[q] = o
	}
	return out
}

// errOvertaken says another commit extended the table between the plan and
// the lock.
var errOvertaken = errors.New("tail: another commit extended the table")

// loadSummary marks the snapshots of table loads.
var loadSummary = map[string]string{icebergmeta.SummaryCommittedBy: icebergmeta.CommittedByLoad}

// store takes the row lock and commits the tail files that take base's
// content to offs, when the head still ends where base did for each
// partition they extend. Otherwise it returns the head it found and
// errOvertaken, or, when underLock is set, plans again from that head and
// builds what is missing under the lock (wanted decides which). Only ranges
// built (have) move the content end: a range without a row of the table
// has no file but was read.
func (l *Loader) store(ctx context.Context, base *commit.Head, offs map[int32]kafka.Offsets,
	built map[tailRange]*commit.TailFile, have map[tailRange]bool, underLock bool) (*commit.Head, error) {
	t, src := base.Table, base.Source
	var h *commit.Head
	var add []*commit.TailFile
	err := commit.InLock(ctx, l.pool, t, src, func(tx pgx.Tx, locked *commit.Head) error {
		h = locked
		want, err := wanted(base.Ends, h.Ends, offs, underLock)
		if err != nil {
			return err
		}
		if underLock {
			// Under the row lock, a build must not decide a writer schema
			// (that takes this row lock and a second connection): one
			// not decided yet stops the partition there, as an outage does.
			if want, _, err = l.buildUpTo(ctx, t, src, want, h.Ends, offs, built, have, schemas.ChooseDecided); err != nil {
				return err
			}
		}
		var ends map[int32]int64
		if add, ends, err = gather(t, want, built, have); err != nil {
			return err
		}
		if len(add) > 0 {
			added := make([]icebergmeta.AddedFile, len(add))
			for i, f := range add {
				added[i] = f.Added(t)
			}
			res, err := commit.Append(ctx, tx, h, nil, loadSummary, added)
			if err != nil {
				return err
			}
			if err := commit.InsertTailFiles(ctx, tx, t, res.SnapshotID, add); err != nil {
				return err
			}
		}
		// Ranges without a row of this table (control records, the other
		// table's rows) move the content end too: no later load reads them again.
		return commit.SetEnds(ctx, tx, h, ends)
	})
	if errors.Is(err, errOvertaken) {
		return h, err
	}
	if err != nil {
		return nil, err
	}
	l.committed(h, add)
	return h, nil
}

// wanted returns the ranges a commit on a head whose content ends are
// locked covers: the tail of base (the ends the files were built for) when
// the ends did not move for any partition it extends. Otherwise it returns
// errOvertaken, or, underLock, the tail from locked (built under the lock,
// where no other commit can overtake it).
func wanted(base, locked map[int32]int64, offs map[int32]kafka.Offsets, underLock bool) ([]tailRange, error) {
	want := tailOf(base, offs)
	for _, r := range want {
		if locked[r.partition] != base[r.partition] {
			if !underLock {
				return nil, errOvertaken
			}
			return tailOf(locked, offs), nil
		}
	}
	return want, nil
}

// gather returns the tail files of want to commit (the ranges with a row of
// t) and the content ends they move to. Every range must have been built.
func gather(t *tables.Table, want []tailRange, built map[tailRange]*commit.TailFile, have map[tailRange]bool) (
	[]*commit.TailFile, map[int32]int64, error) {
	var add []*commit.TailFile
	ends := map[int32]int64{}
	for _, r := range want {
		if !have[r] {
			return nil, nil, fmt.Errorf("tail: %s partition %d [%d, %d) was not built", t.FullName(), r.partition, r.start, r.end)
		}
		if f := built[r]; f != nil {
			add = append(add, f)
		}
		ends[r.partition] = r.end
	}
	return add, ends, nil
}

// committed counts the tail files a load committed on h and hands them to
// OnBuilt.
func (l *Loader) committed(h *commit.Head, add []*commit.TailFile) {
	if len(add) == 0 {
		return
	}
	l.snapshots.Inc()
	for _, f := range add {
		l.files.Inc()
		l.built.Add(float64(f.Size))
		if l.cfg.OnBuilt != nil {
			l.cfg.OnBuilt(f.Key, f.File.Bytes)
		}
	}
	l.cfg.Logger.Debug("tail: committed", "table", h.Table.FullName(), "snapshot_id", *h.CurrentSnapshotID,
		"sequence_number", h.LastSequenceNumber, "files", len(add))
}

// build builds the tail file of each range of tail that has not been built
// yet (have), partitions in parallel, into built (nil for a range without a
// row of t), choosing each file's schema version with version
// (schemas.Choose, or schemas.ChooseDecided under the row lock).
func (l *Loader) build(ctx context.Context, t, src *tables.Table, tail []tailRange,
	built map[tailRange]*commit.TailFile, have map[tailRange]bool, version int) error {
	var todo []tailRange
	for _, r := range tail {
		if !have[r] {
			todo = append(todo, r)
		}
	}
	out := make([]*commit.TailFile, len(todo))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, r := range todo {
		g.Go(func() error {
			f, err := rangefile.Build(gctx, l.kafka, l.cfg.Schemas, t, src, r.partition, r.start, r.end, version)
			out[i] = f
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	for i, r := range todo {
		built[r], have[r] = out[i], true
	}
	return nil
}
