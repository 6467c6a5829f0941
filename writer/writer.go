// Package writer runs the job of a table's writer lease (docs/design.md
// §4.6). On every commit interval it brings the table, and then its
// dead-letter table, to the indexed ranges (commit.go): an append snapshot
// of the newly indexed data files, and a replace snapshot that puts indexed
// data files in the place of the tail files zero-lag table loads committed,
// each round in one transaction under the table's row lock, fenced by the
// writer epoch. It also adds partition leases when the topic gains
// partitions.
//
// Every few commit intervals it also expires files below Kafka's log start
// and re-indexes files whose rebuild no longer matches (expiry.go), and
// assembles adjacent small files of a partition into one (assembly.go).
// Every commit, a load's too, thins the history (icebergmeta,
// mink.history.thinning, mink.history.max-snapshots); expiry also expires
// the snapshots that list a file below Kafka's log start (expiry.go), and
// collection deletes what only expired snapshots referenced. Every
// statistics interval it writes the Puffin statistics file of the current
// snapshot from the column sketches of its files (statistics.go).
package writer

import (
	"context"
	_ "embed"
	"errors"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/minkhq/mink/cluster"
	"github.com/minkhq/mink/commit"
	"github.com/minkhq/mink/kafka"
	"github.com/minkhq/mink/pgstore"
	"github.com/minkhq/mink/schemas"
	"github.com/minkhq/mink/tables"
)

// Writer commits snapshots for held writer leases.
type Writer struct {
	pool    *pgxpool.Pool
	kafka   *kafka.Client
	cfg     Config
	commits *prometheus.CounterVec
	// assembled counts the data files assembly replaced, by table.
	assembled *prometheus.CounterVec
	fenced    prometheus.Counter
	// tagCommits counts the metadata commits of consumer-group tags, by
	// table (grouptags.go).
	tagCommits *prometheus.CounterVec
	// watch looks at all the node's writer tables at once (watch.go).
	watch watch
}

// New returns a writer. It panics on a cfg that Validate rejects (`mink
// serve` validates its settings before it starts anything).
func New(pool *pgxpool.Pool, kc *kafka.Client, cfg Config) *Writer {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	if cfg.Schemas == nil {
		cfg.Schemas = schemas.NewStore(pool, nil)
	}
	w := &Writer{pool: pool, kafka: kc, cfg: cfg,
		commits: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mink_commits_total", Help: "Snapshots committed."}, []string{"table"}),
		assembled: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mink_assembled_files_total",
			Help: "Data files that assembly replaced by larger ones (docs/design.md §4.6)."}, []string{"table"}),
		tagCommits: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mink_group_tag_commits_total",
			Help: "Metadata commits that set, moved or removed consumer-group tags (docs/design.md §4.8)."}, []string{"table"})}
	if cfg.Registerer != nil {
		for _, c := range []prometheus.Collector{w.commits, w.assembled, w.tagCommits} {
			if err := cfg.Registerer.Register(c); err != nil {
				var are prometheus.AlreadyRegisteredError
				if !errors.As(err, &are) {
					cfg.Logger.Warn("writer metrics", "err", err)
				}
			}
		}
	}
	w.fenced = cluster.FencedWrites(cfg.Registerer, cluster.JobWriter)
	w.watch.w = w
	return w
}

// Run commits for the lease's table until ctx is done. It returns
// pgstore.ErrFenced (wrapped) when a commit is rejected for a stale epoch.
func (w *Writer) Run(ctx context.Context, l cluster.Lease) error {
	log := w.cfg.Logger.With("scope", l.Scope, "epoch", l.Epoch, "table_id", l.TableID)
	tick := time.NewTicker(w.cfg.CommitInterval)
	defer tick.Stop()
	watched := w.watch.add(l.TableID)
	defer w.watch.remove(l.TableID, watched)
	s := schedule{expiryInterval: w.expiryInterval(), checkInterval: w.cfg.PartitionCheckInterval,
		statsInterval: w.cfg.StatisticsInterval, commitInterval: w.cfg.CommitInterval, collectAfter: w.cfg.CollectAfter,
		merged: mergedCache{}}
	for {
		err := w.round(ctx, l, &s, s.gates(time.Now(), w.watch.state(watched)), log)
		if errors.Is(err, errTableDeleted) {
			log.Info("writer: table deleted; stopping")
			return nil
		}
		if errors.Is(err, pgstore.ErrFenced) {
			w.fenced.Inc()
			log.Warn("writer: fenced, stopping", "err", err)
			return err
		}
		if err != nil && ctx.Err() == nil {
			log.Warn("writer: commit failed, will retry", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		case <-watched.wake:
		}
	}
}

// errTableDeleted ends Run: the lease's table is gone.
var errTableDeleted = errors.New("writer: table deleted")

// schedule says when the writer's duties beyond the commit run
// (docs/design.md §4.6): expiry and assembly every expiryInterval, the
// partition check and collection every checkInterval, statistics every
// statsInterval, each when its gate is open (gates). A writer's first
// round runs them all.
type schedule struct {
	expiryInterval, checkInterval, statsInterval time.Duration
	lastExpiry, lastCheck, lastStats             time.Time
	lastAssembly                                 time.Time
	// lastTags is when the consumer-group tag duty last ran.
	lastTags time.Time
	// commitInterval and collectAfter are Config's.
	commitInterval, collectAfter time.Duration
	// lastCommit is when the last commit started.
	lastCommit time.Time
	// started: the first round ran.
	started bool
	// The state each gated duty last ran on (ran), and when the heads
	// last changed (changed).
	ran     map[duty]ranOn
	heads   string
	changed time.Time
	// merged are the sketches the statistics merged last (statistics.go).
	merged mergedCache
	// assemblyFrom is the partition the next assembly pass starts from
	// (passPlan).
	assemblyFrom int32
}

// assemblyDue reports whether assembly runs at now (every expiryInterval,
// after expiry), and if so counts it as run.
func (s *schedule) assemblyDue(now time.Time) bool {
	return due(now, &s.lastAssembly, s.expiryInterval)
}

// tagsDue reports whether the consumer-group tag duty runs at now (every
// expiryInterval), and if so counts it as run.
func (s *schedule) tagsDue(now time.Time) bool { return due(now, &s.lastTags, s.expiryInterval) }

// statsDue reports whether statistics run at now, and if so counts them as
// run.
func (s *schedule) statsDue(now time.Time) bool { return due(now, &s.lastStats, s.statsInterval) }

// expiryDue reports whether expiry runs at now, and if so counts it as run.
func (s *schedule) expiryDue(now time.Time) bool { return due(now, &s.lastExpiry, s.expiryInterval) }

// checkDue reports whether the partition check and collection run at now,
// and if so counts them as run.
func (s *schedule) checkDue(now time.Time) bool { return due(now, &s.lastCheck, s.checkInterval) }

func due(now time.Time, last *time.Time, every time.Duration) bool {
	if now.Sub(*last) < every {
		return false
	}
	*last = now
	return true
}

// round is one round of the writer of l's table: the commit of the table
// and of its dead-letter table, then the duties s says are due, of those
// g lets run. It returns errTableDeleted when the table is gone. Failures
// of expiry (other than fencing), of the partition check and of collection
// are logged, not returned: the next round that has them due tries again.
func (w *Writer) round(ctx context.Context, l cluster.Lease, s *schedule, g gates, log *slog.Logger) error {
	if g.none() {
		return nil // idle: nothing changed that a duty depends on
	}
	t, err := tables.Get(ctx, w.pool, l.TableID)
	if errors.Is(err, tables.ErrNotFound) {
		return errTableDeleted
	}
	if err != nil {
		return err
	}
	dlq, err := tables.DLQ(ctx, w.pool, l.TableID)
	if err != nil {
		return err
	}
	if g.commit {
		for _, tbl := range []*tables.Table{t, dlq} {
			if err := w.commit(ctx, l, tbl); err != nil {
				return err
			}
		}
	}
	if g.allows(dutyStats) && s.statsDue(time.Now()) {
		ok := true
		for _, tbl := range []*tables.Table{t, dlq} {
			if tbl == nil {
				continue
			}
			if _, err := w.statistics(ctx, l, tbl, s.merged); errors.Is(err, pgstore.ErrFenced) {
				return err
			} else if err != nil {
				ok = false
				if ctx.Err() == nil {
					log.Warn("writer: statistics failed, will retry", "table", tbl.FullName(), "err", err)
				}
			}
		}
		s.done(dutyStats, g, ok)
	}
	if g.allows(dutyExpiry) && s.expiryDue(time.Now()) {
		err := w.expire(ctx, l, t, dlq)
		if errors.Is(err, pgstore.ErrFenced) {
			return err
		} else if err != nil && ctx.Err() == nil {
			log.Warn("writer: expiry failed, will retry", "err", err)
		}
		s.done(dutyExpiry, g, err == nil)
	}
	if g.allows(dutyAssembly) && s.assemblyDue(time.Now()) {
		err := w.assemble(ctx, l, t, dlq, &s.assemblyFrom)
		if errors.Is(err, pgstore.ErrFenced) {
			return err
		} else if err != nil && ctx.Err() == nil {
			log.Warn("writer: assembly failed, will retry", "err", err)
		}
		s.done(dutyAssembly, g, err == nil)
	}
	if g.allows(dutyTags) && s.tagsDue(time.Now()) {
		_, err := w.groupTags(ctx, l, t)
		if errors.Is(err, pgstore.ErrFenced) {
			return err
		} else if err != nil && ctx.Err() == nil {
			log.Warn("writer: consumer-group tags failed, will retry", "err", err)
		}
		s.done(dutyTags, g, err == nil)
	}
	if (g.allows(dutyCheck) || g.allows(dutyCollect)) && s.checkDue(time.Now()) {
		if g.allows(dutyCheck) {
			err := w.checkPartitions(ctx, t)
			if err != nil {
				log.Warn("writer: partition check failed", "err", err)
			}
			s.done(dutyCheck, g, err == nil)
		}
		if g.allows(dutyCollect) {
			err := w.collect(ctx, l, t, dlq)
			if err != nil {
				log.Warn("writer: collection failed", "err", err)
			}
			s.done(dutyCollect, g, err == nil)
		}
	}
	return nil
}

// checkPartitions adds leases for partitions the topic gained; they start
// at their log start offset.
func (w *Writer) checkPartitions(ctx context.Context, t *tables.Table) error {
	offs, err := w.kafka.ListOffsets(ctx, t.Topic)
	if err != nil {
		return err
	}
	var have int
	if err := w.pool.QueryRow(ctx, partitionCountSQL, t.ID).Scan(&have); err != nil {
		return err
	}
	if len(offs) <= have {
		return nil
	}
	var starts []tables.PartitionStart
	for p, o := range offs {
		starts = append(starts, tables.PartitionStart{Partition: p, Offset: o.LogStart})
	}
	return tables.AddPartitions(ctx, w.pool, t.ID, starts)
}

// metadataJSONDelay is how long a metadata JSON file that left the
// metadata-log is kept (collect_metadata_json.sql).
const metadataJSONDelay = 10 * time.Second

var (
	//go:embed sql/partition_count.sql
	partitionCountSQL string
	//go:embed sql/check_epoch.sql
	checkEpochSQL string
	//go:embed sql/collect_snapshots.sql
	collectSnapshotsSQL string
	//go:embed sql/collect_manifests.sql
	collectManifestsSQL string
	//go:embed sql/collect_data_files.sql
	collectDataFilesSQL string
	//go:embed sql/collect_tail_files.sql
	collectTailFilesSQL string
	//go:embed sql/collect_metadata_json.sql
	collectMetadataJSONSQL string
)

// collect is the writer's collection (docs/design.md §4.6), fenced like
// every writer write, for the table and its dead-letter table
// (collectExpired).
func (w *Writer) collect(ctx context.Context, l cluster.Lease, tbls ...*tables.Table) error {
	return w.fencedTx(ctx, l, func(tx pgx.Tx) error {
		for _, t := range tbls {
			if t != nil {
				if err := w.collectExpired(ctx, tx, t); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// fencedTx runs fn in a transaction fenced by the writer's lease l, for
// writes that store no snapshot (whose trigger would check the epoch):
// check_epoch.sql locks the lease row FOR SHARE until the transaction ends.
// It commits when fn returns nil. Errors wrap pgstore.ErrFenced for a stale
// epoch.
func (w *Writer) fencedTx(ctx context.Context, l cluster.Lease, fn func(tx pgx.Tx) error) error {
	return pgx.BeginTxFunc(ctx, w.pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, checkEpochSQL, l.Scope, l.Holder, l.Epoch); err != nil {
			return pgstore.Fenced(err)
		}
		return fn(tx)
	})
}

// collectExpired deletes, in the collection's transaction, what only
// snapshots expired more than CollectAfter ago referenced: their rows,
// their manifest lists, the manifests no remaining snapshot lists, and the
// rows of data files and tail files removed before every remaining
// snapshot; the Puffin statistics files of collected snapshots; and
// metadata JSON files that are neither current nor in the current
// metadata's metadata-log. Waiting CollectAfter lets an engine
// finish reading a snapshot it loaded just before it expired.
func (w *Writer) collectExpired(ctx context.Context, tx pgx.Tx, t *tables.Table) error {
	rows, err := tx.Query(ctx, collectSnapshotsSQL, t.ID, w.cfg.CollectAfter.Microseconds())
	if err != nil {
		return err
	}
	var lists, manifests []string
	var list string
	var ms []string
	if _, err := pgx.ForEachRow(rows, []any{&list, &ms}, func() error {
		lists, manifests = append(lists, tables.Key(list)), append(manifests, ms...)
		return nil
	}); err != nil {
		return err
	}
	if len(lists) > 0 {
		for _, q := range []struct {
			sql  string
			args []any
		}{
			{collectManifestsSQL, []any{t.ID, lists, manifests}},
			{collectDataFilesSQL, []any{t.ID}},
			{collectTailFilesSQL, []any{t.ID}},
		} {
			if _, err := tx.Exec(ctx, q.sql, q.args...); err != nil {
				return err
			}
		}
	}
	src, err := tables.Source(ctx, tx, t)
	if err != nil {
		return err
	}
	h, err := commit.ReadIn(ctx, tx, t, src)
	if err != nil {
		return err
	}
	md, err := h.Parsed()
	if err != nil {
		return err
	}
	keep := []string{tables.Key(h.MetadataLocation)}
	for e := range md.PreviousFiles() {
		keep = append(keep, tables.Key(e.MetadataFile))
	}
	if _, err = tx.Exec(ctx, collectMetadataJSONSQL, t.ID, keep, metadataJSONDelay.Microseconds()); err != nil {
		return err
	}
	keep = keep[:0]
	for sf := range md.Statistics() {
		keep = append(keep, tables.Key(sf.StatisticsPath))
	}
	_, err = tx.Exec(ctx, collectStatisticsSQL, t.ID, keep)
	return err
}
