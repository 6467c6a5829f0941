// Package writer runs the job of a table's writer lease (design §4.6): on
// every commit interval it appends the table's newly indexed data files as
// one Iceberg snapshot, and those of its dead-letter table as another, each
// in one transaction fenced by the writer epoch and compare-and-swapped on
// the table's metadata location. It also adds partition leases when the
// topic gains partitions.
//
// Every few commit intervals it also expires files below Kafka's log start
// and re-indexes files whose rebuild no longer matches (expiry.go). Commits
// expire old snapshots (icebergmeta, history.expire.max-snapshot-age-ms);
// collection deletes what only expired snapshots referenced. Assembly and
// statistics files come later.
package writer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/minkhq/mink/cluster"
	"github.com/minkhq/mink/datafile"
	"github.com/minkhq/mink/icebergmeta"
	"github.com/minkhq/mink/kafka"
	"github.com/minkhq/mink/pgstore"
	"github.com/minkhq/mink/tables"
)

// ErrConcurrentCommit is returned when the table's metadata location moved
// underneath a commit (another writer committed; should not happen while
// fencing holds).
var ErrConcurrentCommit = errors.New("writer: metadata location changed during commit")

// Config tunes the writer.
type Config struct {
	// CommitInterval is how often new ranges are committed. Default 2s.
	CommitInterval time.Duration
	// MaxFilesPerCommit caps the data files one snapshot adds. Default 10000.
	MaxFilesPerCommit int
	// PartitionCheckInterval is how often the topic's partition count is
	// compared with the table's leases. Default 30s.
	PartitionCheckInterval time.Duration
	// CollectAfter is how long after a snapshot expired the files only it
	// referenced are deleted: at least the lifetime of transient snapshots
	// (tail.Config.Lifetime), which may list them. Default 10m.
	CollectAfter time.Duration
	Registerer   prometheus.Registerer
	Logger       *slog.Logger
}

// Writer commits snapshots for held writer leases.
type Writer struct {
	pool    *pgxpool.Pool
	kafka   *kafka.Client
	cfg     Config
	commits *prometheus.CounterVec
	fenced  prometheus.Counter
}

// New returns a writer.
func New(pool *pgxpool.Pool, kc *kafka.Client, cfg Config) *Writer {
	if cfg.CommitInterval <= 0 {
		cfg.CommitInterval = 2 * time.Second
	}
	if cfg.MaxFilesPerCommit <= 0 {
		cfg.MaxFilesPerCommit = 10000
	}
	if cfg.PartitionCheckInterval <= 0 {
		cfg.PartitionCheckInterval = 30 * time.Second
	}
	if cfg.CollectAfter <= 0 {
		cfg.CollectAfter = 10 * time.Minute
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	w := &Writer{pool: pool, kafka: kc, cfg: cfg,
		commits: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mink_commits_total", Help: "Snapshots committed."}, []string{"table"})}
	if cfg.Registerer != nil {
		if err := cfg.Registerer.Register(w.commits); err != nil {
			var are prometheus.AlreadyRegisteredError
			if !errors.As(err, &are) {
				cfg.Logger.Warn("writer metrics", "err", err)
			}
		}
	}
	w.fenced = cluster.FencedWrites(cfg.Registerer, cluster.JobWriter)
	return w
}

// Run commits for the lease's table until ctx is done. It returns
// pgstore.ErrFenced (wrapped) when a commit is rejected for a stale epoch.
func (w *Writer) Run(ctx context.Context, l cluster.Lease) error {
	log := w.cfg.Logger.With("scope", l.Scope, "epoch", l.Epoch, "table_id", l.TableID)
	tick := time.NewTicker(w.cfg.CommitInterval)
	defer tick.Stop()
	var lastCheck, lastExpiry time.Time
	for {
		t, err := tables.Get(ctx, w.pool, l.TableID)
		if errors.Is(err, tables.ErrNotFound) {
			log.Info("writer: table deleted; stopping")
			return nil
		}
		if err == nil {
			var dlq *tables.Table
			dlq, err = tables.DLQ(ctx, w.pool, l.TableID)
			for _, tbl := range []*tables.Table{t, dlq} {
				if err != nil {
					break
				}
				err = w.commit(ctx, l, tbl)
			}
			if err == nil && time.Since(lastExpiry) >= w.expiryInterval() {
				lastExpiry = time.Now()
				if xerr := w.expire(ctx, l, t, dlq); errors.Is(xerr, pgstore.ErrFenced) {
					err = xerr
				} else if xerr != nil && ctx.Err() == nil {
					log.Warn("writer: expiry failed, will retry", "err", xerr)
				}
			}
			if err == nil && time.Since(lastCheck) >= w.cfg.PartitionCheckInterval {
				lastCheck = time.Now()
				if perr := w.checkPartitions(ctx, t); perr != nil {
					log.Warn("writer: partition check failed", "err", perr)
				}
				if cerr := w.collect(ctx, l, t, dlq); cerr != nil {
					log.Warn("writer: collection failed", "err", cerr)
				}
			}
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
		}
	}
}

type pending struct {
	path      string
	partition int32
	size      int64
	stats     datafile.Stats
}

// commit appends t's uncommitted data files in one snapshot.
func (w *Writer) commit(ctx context.Context, l cluster.Lease, t *tables.Table) error {
	rows, err := w.pool.Query(ctx, `
		SELECT path, partition, file_size, stats FROM data_files
		WHERE table_id = $1 AND committed_snapshot_id IS NULL
		ORDER BY partition, start_offset LIMIT $2`, t.ID, w.cfg.MaxFilesPerCommit)
	if err != nil {
		return err
	}
	var files []pending
	for rows.Next() {
		var p pending
		var stats []byte
		if err := rows.Scan(&p.path, &p.partition, &p.size, &stats); err != nil {
			rows.Close()
			return err
		}
		if err := json.Unmarshal(stats, &p.stats); err != nil {
			rows.Close()
			return fmt.Errorf("writer: stats of %s: %w", p.path, err)
		}
		files = append(files, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if len(files) == 0 {
		return nil
	}

	meta, now, err := currentMetadata(ctx, w.pool, t)
	if err != nil {
		return err
	}
	added := make([]icebergmeta.AddedFile, len(files))
	paths := make([]string, len(files))
	warehouse := t.Location[:len(t.Location)-len(tables.Key(t.Location))]
	for i, f := range files {
		added[i] = icebergmeta.AddedFile{Path: warehouse + f.path, Partition: f.partition, FileSize: f.size, Stats: f.stats}
		paths[i] = f.path
	}
	res, err := icebergmeta.Append(ctx, icebergmeta.AppendInput{
		Metadata: meta, MetadataLocation: t.MetadataLocation, Added: added,
		SnapshotID: icebergmeta.NewSnapshotID(), Now: now, Read: w.read,
	})
	if err != nil {
		return fmt.Errorf("writer: build snapshot of %s: %w", t.FullName(), err)
	}

	tx, err := w.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if err := storeSnapshot(ctx, tx, l, t, "append", res); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `UPDATE data_files SET committed_snapshot_id = $2 WHERE table_id = $1 AND path = ANY($3)`,
		t.ID, res.SnapshotID, paths); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return pgstore.Fenced(err)
	}
	w.commits.WithLabelValues(t.FullName()).Inc()
	w.cfg.Logger.Debug("writer: committed", "table", t.FullName(), "snapshot_id", res.SnapshotID,
		"sequence_number", res.SequenceNumber, "files", len(files))
	return nil
}

// currentMetadata returns t's current metadata JSON and the database
// clock (commits stamp snapshots with it).
func currentMetadata(ctx context.Context, q tables.Querier, t *tables.Table) ([]byte, time.Time, error) {
	var meta []byte
	var now time.Time
	if err := q.QueryRow(ctx, `SELECT content, now() FROM metadata_files WHERE path = $1`,
		tables.Key(t.MetadataLocation)).Scan(&meta, &now); err != nil {
		return nil, time.Time{}, fmt.Errorf("writer: current metadata of %s: %w", t.FullName(), err)
	}
	return meta, now, nil
}

func (w *Writer) read(ctx context.Context, location string) ([]byte, error) {
	var b []byte
	err := w.pool.QueryRow(ctx, `SELECT content FROM metadata_files WHERE path = $1`, tables.Key(location)).Scan(&b)
	if err != nil {
		return nil, fmt.Errorf("writer: read %s: %w", location, err)
	}
	return b, nil
}

// checkPartitions adds leases for partitions the topic gained; they start
// at their log start offset.
func (w *Writer) checkPartitions(ctx context.Context, t *tables.Table) error {
	offs, err := w.kafka.ListOffsets(ctx, t.Topic)
	if err != nil {
		return err
	}
	var have int
	if err := w.pool.QueryRow(ctx, `SELECT count(*) FROM partitions WHERE table_id = $1`, t.ID).Scan(&have); err != nil {
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

// collect is the writer's collection (design §4.6), fenced like every
// writer write: the transient objects of zero-lag loads (tail files,
// transient snapshots and their metadata files) whose lifetime ended, and
// for each table what only its expired snapshots referenced (collectExpired).
func (w *Writer) collect(ctx context.Context, l cluster.Lease, tbls ...*tables.Table) error {
	ids := make([]int64, 0, len(tbls))
	for _, t := range tbls {
		if t != nil {
			ids = append(ids, t.ID)
		}
	}
	tx, err := w.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT mink_check_epoch($1, $2, $3)`, l.Scope, l.Holder, l.Epoch); err != nil {
		return pgstore.Fenced(err)
	}
	for _, q := range []string{
		`DELETE FROM transient_snapshots WHERE table_id = ANY($1) AND expires_at < now()`,
		`DELETE FROM tail_files WHERE table_id = ANY($1) AND expires_at < now()`,
		`DELETE FROM metadata_files WHERE table_id = ANY($1) AND expires_at < now()`,
	} {
		if _, err := tx.Exec(ctx, q, ids); err != nil {
			return err
		}
	}
	for _, t := range tbls {
		if t != nil {
			if err := w.collectExpired(ctx, tx, t); err != nil {
				return err
			}
		}
	}
	return tx.Commit(ctx)
}

// collectExpired deletes, in the collection's transaction, what only
// snapshots expired more than CollectAfter ago referenced: their rows,
// their manifest lists, the manifests no remaining snapshot lists, data
// file rows removed before every remaining snapshot, and metadata JSON
// files older than CollectAfter that are neither current nor in the
// current metadata's metadata-log. Waiting CollectAfter (the lifetime of
// transient snapshots) keeps what a transient snapshot built on an
// expired one still lists.
func (w *Writer) collectExpired(ctx context.Context, tx pgx.Tx, t *tables.Table) error {
	after := w.cfg.CollectAfter.Microseconds()
	rows, err := tx.Query(ctx, `
		DELETE FROM snapshots WHERE table_id = $1 AND expired_at < now() - $2 * interval '1 microsecond'
		RETURNING manifest_list, coalesce(manifests, '{}')`, t.ID, after)
	if err != nil {
		return err
	}
	var lists, manifests []string
	for rows.Next() {
		var list string
		var ms []string
		if err := rows.Scan(&list, &ms); err != nil {
			rows.Close()
			return err
		}
		lists, manifests = append(lists, tables.Key(list)), append(manifests, ms...)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if len(lists) > 0 {
		if _, err := tx.Exec(ctx, `DELETE FROM metadata_files WHERE table_id = $1 AND path = ANY($2)`, t.ID, lists); err != nil {
			return err
		}
		// Rows from before manifests were recorded may list any manifest.
		if _, err := tx.Exec(ctx, `
			DELETE FROM metadata_files m WHERE m.table_id = $1 AND m.path = ANY($2) AND m.expires_at IS NULL
			  AND NOT EXISTS (SELECT 1 FROM snapshots s WHERE s.table_id = $1 AND (s.manifests IS NULL OR m.path = ANY(s.manifests)))`,
			t.ID, manifests); err != nil {
			return err
		}
		// A removed file is listed only by snapshots older than the one that
		// removed it; those expire first (timestamps grow along the branch).
		if _, err := tx.Exec(ctx, `
			DELETE FROM data_files d WHERE d.table_id = $1 AND d.removed_snapshot_id IS NOT NULL
			  AND NOT EXISTS (SELECT 1 FROM snapshots s WHERE s.table_id = $1 AND s.sequence_number <
			      coalesce((SELECT r.sequence_number FROM snapshots r WHERE r.table_id = $1 AND r.snapshot_id = d.removed_snapshot_id), 0))`,
			t.ID); err != nil {
			return err
		}
	}
	current, _, err := currentMetadata(ctx, tx, t)
	if err != nil {
		return err
	}
	md, err := table.ParseMetadataBytes(current)
	if err != nil {
		return fmt.Errorf("writer: current metadata of %s: %w", t.FullName(), err)
	}
	keep := []string{tables.Key(t.MetadataLocation)}
	for e := range md.PreviousFiles() {
		keep = append(keep, tables.Key(e.MetadataFile))
	}
	_, err = tx.Exec(ctx, `
		DELETE FROM metadata_files WHERE table_id = $1 AND path LIKE '%.metadata.json' AND expires_at IS NULL
		  AND created_at < now() - $2 * interval '1 microsecond' AND NOT (path = ANY($3))`, t.ID, after, keep)
	return err
}

// storeSnapshot records a new snapshot of t in the commit's transaction:
// the snapshot row (whose fencing trigger checks the writer epoch and locks
// the lease FOR SHARE, so the lease cannot change hands before commit),
// the new metadata files, and the compare-and-swap of the table's metadata
// location. It returns pgstore.ErrFenced (wrapped) for a stale epoch and
// ErrConcurrentCommit when the location moved underneath.
func storeSnapshot(ctx context.Context, tx pgx.Tx, l cluster.Lease, t *tables.Table, op string, res *icebergmeta.CommitResult) error {
	manifests := make([]string, len(res.Manifests))
	for i, m := range res.Manifests {
		manifests[i] = tables.Key(m)
	}
	if _, err := tx.Exec(ctx, `
		INSERT INTO snapshots (table_id, snapshot_id, parent_snapshot_id, sequence_number, operation, manifest_list,
		                       metadata_location, lease_scope, lease_holder, lease_epoch, manifests)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		t.ID, res.SnapshotID, t.CurrentSnapshotID, res.SequenceNumber, op, res.ManifestList, res.MetadataLocation,
		l.Scope, l.Holder, l.Epoch, manifests); err != nil {
		return pgstore.Fenced(err)
	}
	if len(res.Expired) > 0 {
		if _, err := tx.Exec(ctx, `
			UPDATE snapshots SET expired_at = now() WHERE table_id = $1 AND snapshot_id = ANY($2) AND expired_at IS NULL`,
			t.ID, res.Expired); err != nil {
			return pgstore.Fenced(err)
		}
	}
	files := append(slices.Clip(res.Files), icebergmeta.OutputFile{Location: res.MetadataLocation, Content: res.Metadata})
	for _, f := range files {
		if _, err := tx.Exec(ctx, `INSERT INTO metadata_files (path, table_id, content) VALUES ($1, $2, $3)`,
			tables.Key(f.Location), t.ID, f.Content); err != nil {
			return err
		}
	}
	tag, err := tx.Exec(ctx, `
		UPDATE tables SET metadata_location = $2, current_snapshot_id = $3, last_sequence_number = $4
		WHERE id = $1 AND metadata_location = $5`,
		t.ID, res.MetadataLocation, res.SnapshotID, res.SequenceNumber, t.MetadataLocation)
	if err != nil {
		return err
	}
	if tag.RowsAffected() != 1 {
		return ErrConcurrentCommit
	}
	return nil
}
