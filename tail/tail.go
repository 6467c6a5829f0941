// Package tail makes table loads zero-lag (design §4.4). A load compares
// the committed snapshot with the last stable offsets of the topic; when
// Kafka holds records past the snapshot, the serving node builds tail data
// files for the missing ranges and answers a transient child snapshot that
// lists them. Transient objects live in Postgres for a short lifetime
// (tail_files, transient_snapshots, metadata_files.expires_at) so that any
// node can serve and rebuild them, and are then collected by the writer.
//
// Every record acknowledged before the load is in the snapshot it returns:
// a producer's acknowledged record is below the last stable offset (for
// read_committed, once its transaction commits), and the tail starts where
// the committed snapshot's content ends, per partition, read in the same
// database snapshot as the committed metadata, so there is no gap and no
// overlap.
package tail

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/singleflight"

	"github.com/minkhq/mink/catalog"
	"github.com/minkhq/mink/datafile"
	"github.com/minkhq/mink/icebergmeta"
	"github.com/minkhq/mink/kafka"
	"github.com/minkhq/mink/pgstore"
	"github.com/minkhq/mink/tables"
)

// DefaultLifetime is how long a transient snapshot and its tail files are
// kept after they were last handed out.
const DefaultLifetime = 10 * time.Minute

// Config tunes zero-lag loads.
type Config struct {
	// Lifetime of transient snapshots and tail files after their last use.
	// Default DefaultLifetime. Engines must finish reading a loaded
	// snapshot within it.
	Lifetime time.Duration
	// OnBuilt, when set, receives each tail data file built, by key (the
	// node keeps those it owns in its cache).
	OnBuilt func(key string, content []byte)
	// Registerer receives mink_tail_files_total{how="built"|"reused"} and
	// mink_tail_build_bytes_total. Nil: not registered.
	Registerer prometheus.Registerer
	Logger     *slog.Logger
}

// Loader implements catalog.Loader.
type Loader struct {
	pool  *pgxpool.Pool
	kafka *kafka.Client
	cfg   Config
	group singleflight.Group
	// files counts tail files by how="built"|"reused"; built counts the
	// bytes of the files built.
	files *prometheus.CounterVec
	built prometheus.Counter
}

// New returns a Loader.
func New(pool *pgxpool.Pool, kc *kafka.Client, cfg Config) *Loader {
	if cfg.Lifetime <= 0 {
		cfg.Lifetime = DefaultLifetime
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	l := &Loader{pool: pool, kafka: kc, cfg: cfg,
		files: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mink_tail_files_total",
			Help: "Tail data files in transient snapshots handed out, built now or reused from an earlier load."}, []string{"how"}),
		built: prometheus.NewCounter(prometheus.CounterOpts{Name: "mink_tail_build_bytes_total",
			Help: "Bytes of tail data files built for zero-lag loads."}),
	}
	if cfg.Registerer != nil {
		for _, c := range []prometheus.Collector{l.files, l.built} {
			if err := cfg.Registerer.Register(c); err != nil {
				cfg.Logger.Warn("tail metrics", "err", err)
			}
		}
	}
	return l
}

// tailRange is a range of one partition past the committed snapshot.
type tailRange struct {
	partition  int32
	start, end int64
}

// state is the committed table as one database snapshot sees it.
type state struct {
	location string
	metadata []byte
	// ends holds, per partition, the offset below which every record with
	// a row in this table is in the committed snapshot.
	ends map[int32]int64
}

// LoadTable returns the committed metadata when the snapshot is up to
// date with Kafka, else a transient child snapshot with the tail. Errors
// wrap catalog.ErrUnavailable when Kafka or Postgres cannot be reached.
func (l *Loader) LoadTable(ctx context.Context, committed catalog.Table) (catalog.Table, error) {
	t, err := tables.Get(ctx, l.pool, committed.ID)
	if err != nil {
		return committed, unavailable(err)
	}
	src := t
	if t.DLQOf != nil {
		if src, err = tables.Get(ctx, l.pool, *t.DLQOf); err != nil {
			return committed, unavailable(err)
		}
	}
	// Read Kafka first: every record acknowledged before this load is
	// below these offsets, whatever the writer commits meanwhile.
	offs, err := l.kafka.ListOffsets(ctx, src.Topic)
	if err != nil {
		return committed, fmt.Errorf("%w: %w", catalog.ErrUnavailable, err)
	}
	st, err := l.read(ctx, t, src)
	if err != nil {
		return committed, unavailable(err)
	}
	out := committed
	out.MetadataLocation, out.Metadata = st.location, st.metadata
	var tail []tailRange
	for p, end := range st.ends {
		// Never below Kafka's log start (retention, DeleteRecords): those
		// records are gone, and a tail file of them could not be rebuilt.
		if o, ok := offs[p]; ok && o.LastStable > max(end, o.LogStart) {
			tail = append(tail, tailRange{partition: p, start: max(end, o.LogStart), end: o.LastStable})
		}
	}
	if len(tail) == 0 {
		return out, nil
	}
	slices.SortFunc(tail, func(a, b tailRange) int { return int(a.partition - b.partition) })
	key := tailKey(tail)
	v, err, _ := l.group.Do(fmt.Sprintf("%d|%s|%s", t.ID, st.location, key), func() (any, error) {
		return l.transient(context.WithoutCancel(ctx), t, src, st, tail, key)
	})
	if err != nil {
		return committed, unavailable(err)
	}
	res := v.(catalog.Table)
	out.MetadataLocation, out.Metadata = res.MetadataLocation, res.Metadata
	return out, nil
}

func tailKey(tail []tailRange) string {
	parts := make([]string, len(tail))
	for i, r := range tail {
		parts[i] = fmt.Sprintf("%d:%d-%d", r.partition, r.start, r.end)
	}
	return strings.Join(parts, ",")
}

// read returns the committed metadata and, per partition, where its
// content ends, from one database snapshot (a commit changes both at once).
func (l *Loader) read(ctx context.Context, t, src *tables.Table) (*state, error) {
	tx, err := l.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(ctx)
	st := &state{ends: map[int32]int64{}}
	if err := tx.QueryRow(ctx, `SELECT metadata_location FROM tables WHERE id = $1`, t.ID).Scan(&st.location); err != nil {
		return nil, err
	}
	if err := tx.QueryRow(ctx, `SELECT content FROM metadata_files WHERE path = $1`, tables.Key(st.location)).Scan(&st.metadata); err != nil {
		return nil, fmt.Errorf("tail: metadata of %s: %w", t.FullName(), err)
	}
	// A table's content ends at its first uncommitted data file; with none,
	// at the end of the indexed ranges (ranges with no row for this table
	// need no commit).
	rows, err := tx.Query(ctx, `
		SELECT p.partition,
		       coalesce((SELECT min(d.start_offset) FROM data_files d
		                 WHERE d.table_id = $1 AND d.partition = p.partition AND d.committed_snapshot_id IS NULL),
		                (SELECT max(g.end_offset) FROM ranges g WHERE g.table_id = $2 AND g.partition = p.partition),
		                p.start_offset)
		FROM partitions p WHERE p.table_id = $2`, t.ID, src.ID)
	if err != nil {
		return nil, err
	}
	var p int32
	var end int64
	if _, err := pgx.ForEachRow(rows, []any{&p, &end}, func() error {
		st.ends[p] = end
		return nil
	}); err != nil {
		return nil, err
	}
	return st, tx.Commit(ctx)
}

// transient returns the transient snapshot for (committed state, tail):
// an existing one, extended, or a new one built now.
func (l *Loader) transient(ctx context.Context, t, src *tables.Table, st *state, tail []tailRange, key string) (catalog.Table, error) {
	lifetime := l.cfg.Lifetime.Microseconds()
	var loc string
	var meta []byte
	err := l.pool.QueryRow(ctx, `
		WITH s AS (
			UPDATE transient_snapshots SET expires_at = now() + $4 * interval '1 microsecond'
			WHERE table_id = $1 AND base_location = $2 AND tail = $3 AND expires_at > now()
			RETURNING metadata_location, snapshot_id)
		SELECT s.metadata_location, m.content FROM s JOIN metadata_files m ON m.path = substr(s.metadata_location, length($5) + 1)`,
		t.ID, st.location, key, lifetime, warehousePrefix(t)).Scan(&loc, &meta)
	if err == nil {
		if err := l.extend(ctx, t, loc, tail); err != nil {
			return catalog.Table{}, err
		}
		return catalog.Table{MetadataLocation: loc, Metadata: meta}, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return catalog.Table{}, err
	}

	files, err := l.buildTail(ctx, t, src, tail)
	if err != nil {
		return catalog.Table{}, err
	}
	var added []icebergmeta.AddedFile
	for _, f := range files {
		added = append(added, icebergmeta.AddedFile{Path: warehousePrefix(t) + f.key, Partition: f.r.partition,
			FileSize: f.size, Stats: f.stats})
	}
	if len(added) == 0 {
		// Only records without rows here (control records, or rows of the
		// other table): the committed snapshot is complete.
		return catalog.Table{MetadataLocation: st.location, Metadata: st.metadata}, nil
	}

	var now time.Time
	if err := l.pool.QueryRow(ctx, `SELECT now()`).Scan(&now); err != nil {
		return catalog.Table{}, err
	}
	res, err := icebergmeta.Append(ctx, icebergmeta.AppendInput{
		Metadata: st.metadata, MetadataLocation: st.location, Added: added,
		SnapshotID: icebergmeta.NewSnapshotID(), Now: now, NoMerge: true,
		Read: func(ctx context.Context, location string) ([]byte, error) {
			var b []byte
			err := l.pool.QueryRow(ctx, `SELECT content FROM metadata_files WHERE path = $1`, tables.Key(location)).Scan(&b)
			return b, err
		},
	})
	if err != nil {
		return catalog.Table{}, fmt.Errorf("tail: snapshot of %s: %w", t.FullName(), err)
	}

	tx, err := l.pool.Begin(ctx)
	if err != nil {
		return catalog.Table{}, err
	}
	defer tx.Rollback(ctx)
	var reused []string
	for _, b := range files {
		if b.file == nil {
			reused = append(reused, b.key)
			continue
		}
		if _, err := tx.Exec(ctx, `
			INSERT INTO tail_files (path, table_id, partition, start_offset, end_offset, encoder_version,
			                        file_size, sha256, record_count, stats, expires_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, now() + $11 * interval '1 microsecond')
			ON CONFLICT (path) DO UPDATE SET expires_at = greatest(tail_files.expires_at, excluded.expires_at)`,
			b.key, t.ID, b.r.partition, b.r.start, b.r.end, datafile.EncoderVersion,
			len(b.file.Bytes), b.file.SHA256[:], b.file.Stats.RecordCount, b.file.Stats, lifetime); err != nil {
			return catalog.Table{}, err
		}
	}
	for _, f := range res.Files {
		if err := insertMetadata(ctx, tx, t.ID, tables.Key(f.Location), f.Content, lifetime); err != nil {
			return catalog.Table{}, err
		}
	}
	if err := insertMetadata(ctx, tx, t.ID, tables.Key(res.MetadataLocation), res.Metadata, lifetime); err != nil {
		return catalog.Table{}, err
	}
	if _, err := tx.Exec(ctx, `
		INSERT INTO transient_snapshots (table_id, base_location, tail, snapshot_id, metadata_location, expires_at)
		VALUES ($1, $2, $3, $4, $5, now() + $6 * interval '1 microsecond')
		ON CONFLICT (table_id, base_location, tail) DO UPDATE
		SET snapshot_id = excluded.snapshot_id, metadata_location = excluded.metadata_location, expires_at = excluded.expires_at`,
		t.ID, st.location, key, res.SnapshotID, res.MetadataLocation, lifetime); err != nil {
		return catalog.Table{}, err
	}
	if len(reused) > 0 {
		// Reused tail files live as long as this snapshot too.
		if _, err := tx.Exec(ctx, `
			UPDATE tail_files SET expires_at = greatest(expires_at, now() + $2 * interval '1 microsecond') WHERE path = ANY($1)`,
			reused, lifetime); err != nil {
			return catalog.Table{}, err
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return catalog.Table{}, err
	}
	for _, b := range files {
		if b.file == nil {
			l.files.WithLabelValues("reused").Inc()
			continue
		}
		l.files.WithLabelValues("built").Inc()
		l.built.Add(float64(len(b.file.Bytes)))
		if l.cfg.OnBuilt != nil {
			l.cfg.OnBuilt(b.key, b.file.Bytes)
		}
	}
	l.cfg.Logger.Debug("tail: transient snapshot", "table", t.FullName(), "snapshot_id", res.SnapshotID, "tail", key)
	return catalog.Table{MetadataLocation: res.MetadataLocation, Metadata: res.Metadata}, nil
}

// extend keeps the tail files of a transient snapshot (those inside its
// tail ranges) and its metadata files as long as it.
func (l *Loader) extend(ctx context.Context, t *tables.Table, loc string, tail []tailRange) error {
	lifetime := l.cfg.Lifetime.Microseconds()
	parts, starts, ends := make([]int32, len(tail)), make([]int64, len(tail)), make([]int64, len(tail))
	for i, r := range tail {
		parts[i], starts[i], ends[i] = r.partition, r.start, r.end
	}
	if _, err := l.pool.Exec(ctx, `
		UPDATE tail_files f SET expires_at = greatest(f.expires_at, now() + $5 * interval '1 microsecond')
		FROM unnest($2::int[], $3::bigint[], $4::bigint[]) AS r(partition, start_offset, end_offset)
		WHERE f.table_id = $1 AND f.partition = r.partition
		  AND f.start_offset >= r.start_offset AND f.end_offset <= r.end_offset`,
		t.ID, parts, starts, ends, lifetime); err != nil {
		return err
	}
	// The snapshot's metadata JSON, manifest list and manifest share its
	// commit UUID in their names (icebergmeta's naming).
	name := loc[strings.LastIndexByte(loc, '/')+1:]
	commit := strings.TrimSuffix(name[strings.IndexByte(name, '-')+1:], ".metadata.json")
	_, err := l.pool.Exec(ctx, `UPDATE metadata_files SET expires_at = now() + $3 * interval '1 microsecond'
		WHERE table_id = $1 AND expires_at IS NOT NULL AND strpos(path, $2) > 0`, t.ID, commit, lifetime)
	return err
}

func insertMetadata(ctx context.Context, tx pgx.Tx, tableID int64, path string, content []byte, lifetimeUS int64) error {
	_, err := tx.Exec(ctx, `
		INSERT INTO metadata_files (path, table_id, content, expires_at)
		VALUES ($1, $2, $3, now() + $4 * interval '1 microsecond')`, path, tableID, content, lifetimeUS)
	return err
}

// maxTailFiles bounds the tail files of one partition in a transient
// snapshot: a load reuses the tail files earlier loads built (building
// only past them) until there would be more, then builds the partition's
// whole tail as one file again.
const maxTailFiles = 8

// tailFile is one data file of a transient snapshot's tail: built now
// (file set) or reused from an earlier load.
type tailFile struct {
	r     tailRange
	key   string
	size  int64
	stats datafile.Stats
	file  *datafile.File
}

// buildTail returns the tail files of each range, in partition and offset
// order: for each partition the chain of unexpired tail files earlier
// loads built from the range's start (at most maxTailFiles-1), then one
// file built now from the end of that chain to the range's end. Partitions
// build in parallel.
func (l *Loader) buildTail(ctx context.Context, t, src *tables.Table, tail []tailRange) ([]tailFile, error) {
	spec, err := src.Spec()
	if err != nil {
		return nil, err
	}
	chains, err := l.reusable(ctx, t, tail)
	if err != nil {
		return nil, err
	}
	out := make([][]tailFile, len(tail))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, r := range tail {
		g.Go(func() error {
			chain := chains[r.partition]
			from := r.start
			if n := len(chain); n > 0 && n < maxTailFiles {
				from = chain[n-1].r.end
			} else {
				chain = nil
			}
			out[i] = chain
			if from == r.end {
				return nil
			}
			recs, err := l.kafka.ReadRange(gctx, src.Topic, r.partition, from, r.end)
			if err != nil {
				return err
			}
			res, err := datafile.Build(spec, recs)
			if err != nil {
				return fmt.Errorf("tail: build %s partition %d [%d, %d): %w", t.FullName(), r.partition, from, r.end, err)
			}
			f := res.Data
			if t.DLQOf != nil {
				f = res.DLQ
			}
			if f == nil {
				return nil // no row of this table in the tail
			}
			nr := tailRange{partition: r.partition, start: from, end: r.end}
			out[i] = append(out[i], tailFile{r: nr, key: t.DataFileKey(r.partition, from, r.end, datafile.EncoderVersion),
				size: int64(len(f.Bytes)), stats: f.Stats, file: f})
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return slices.Concat(out...), nil
}

// reusable returns, per partition of tail, the unexpired tail files that
// tile [r.start, x) for the largest x ≤ r.end, in offset order, preferring
// the longest file at each step (one query for all partitions).
func (l *Loader) reusable(ctx context.Context, t *tables.Table, tail []tailRange) (map[int32][]tailFile, error) {
	parts, starts, ends := make([]int32, len(tail)), make([]int64, len(tail)), make([]int64, len(tail))
	next := make(map[int32]int64, len(tail))
	for i, r := range tail {
		parts[i], starts[i], ends[i] = r.partition, r.start, r.end
		next[r.partition] = r.start
	}
	rows, err := l.pool.Query(ctx, `
		SELECT f.path, f.partition, f.start_offset, f.end_offset, f.file_size, f.stats
		FROM tail_files f JOIN unnest($2::int[], $3::bigint[], $4::bigint[]) AS r(partition, start_offset, end_offset)
		  ON f.partition = r.partition AND f.start_offset >= r.start_offset AND f.end_offset <= r.end_offset
		WHERE f.table_id = $1 AND f.encoder_version = $5 AND f.expires_at > now() + interval '1 minute'
		ORDER BY f.partition, f.start_offset, f.end_offset DESC`, t.ID, parts, starts, ends, datafile.EncoderVersion)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	chains := make(map[int32][]tailFile, len(tail))
	for rows.Next() {
		var f tailFile
		if err := rows.Scan(&f.key, &f.r.partition, &f.r.start, &f.r.end, &f.size, &f.stats); err != nil {
			return nil, err
		}
		if f.r.start == next[f.r.partition] {
			chains[f.r.partition] = append(chains[f.r.partition], f)
			next[f.r.partition] = f.r.end
		}
	}
	return chains, rows.Err()
}

// warehousePrefix is "s3://<warehouse>/" of a table's location.
func warehousePrefix(t *tables.Table) string {
	return t.Location[:len(t.Location)-len(tables.Key(t.Location))]
}

func unavailable(err error) error {
	if pgstore.IsUnavailable(err) || errors.Is(err, kafka.ErrUnavailable) {
		return fmt.Errorf("%w: %w", catalog.ErrUnavailable, err)
	}
	return err
}
