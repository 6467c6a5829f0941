// Package indexer runs one goroutine per held partition lease (design
// §4.3): it reads the partition with read_committed from the end of its last
// indexed range, cuts a range at the target size or the flush interval,
// builds the range's data file once to learn its size, SHA-256 and column
// statistics, and inserts the range under the lease epoch. The file itself
// is not kept (unless this node owns it and warms its cache): the owner
// rebuilds it on demand, byte for byte.
package indexer

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/cluster"
	"github.com/minkhq/mink/commit"
	"github.com/minkhq/mink/datafile"
	"github.com/minkhq/mink/kafka"
	"github.com/minkhq/mink/outage"
	"github.com/minkhq/mink/pgstore"
	"github.com/minkhq/mink/rangefile"
	"github.com/minkhq/mink/schemas"
	"github.com/minkhq/mink/tables"
)

// Indexer indexes partitions of held leases.
type Indexer struct {
	pool  *pgxpool.Pool
	kafka *kafka.Client
	cfg   Config
	m     metrics
	// buffered is the cost of the records all partitions hold (see
	// MemoryBudget); builds is a semaphore of concurrent builds.
	buffered atomic.Int64
	builds   chan struct{}
}

type metrics struct {
	records, bytes, ranges, deadLetters *prometheus.CounterVec
	unknownFields                       *prometheus.CounterVec
	indexedOffset, lag, paused          *prometheus.GaugeVec
	fenced                              prometheus.Counter
}

// New returns an indexer. It panics on a cfg that Validate rejects (`mink
// serve` validates its settings before it starts anything).
func New(pool *pgxpool.Pool, kc *kafka.Client, cfg Config) *Indexer {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	if cfg.Schemas == nil {
		cfg.Schemas = schemas.NewStore(pool, nil)
	}
	labels := []string{"table", "partition"}
	m := metrics{
		records:       prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mink_indexed_records_total", Help: "Kafka records indexed (rows and dead letters)."}, labels),
		bytes:         prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mink_indexed_bytes_total", Help: "Key and value bytes of indexed records."}, labels),
		ranges:        prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mink_indexed_ranges_total", Help: "Indexed ranges inserted."}, labels),
		deadLetters:   prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mink_dead_letters_total", Help: "Records sent to the dead-letter table."}, labels),
		unknownFields: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mink_json_unknown_fields_total", Help: "JSON fields of indexed records, at any depth, that match no column: left out of rows, or the reason of a dead letter."}, labels),
		indexedOffset: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "mink_indexed_offset", Help: "End offset of the last indexed range."}, labels),
		lag:           prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "mink_partition_lag_records", Help: "Last stable offset (as of the last fetch) minus the indexed offset."}, labels),
		paused:        prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "mink_partition_schema_wait", Help: "1 while the partition's indexer waits for a writer schema it cannot fetch (schema registry or Postgres unreachable), else 0."}, labels),
	}
	if cfg.Registerer != nil {
		for _, c := range []prometheus.Collector{m.records, m.bytes, m.ranges, m.deadLetters, m.unknownFields, m.indexedOffset, m.lag, m.paused} {
			if err := cfg.Registerer.Register(c); err != nil {
				var are prometheus.AlreadyRegisteredError
				if !errors.As(err, &are) {
					cfg.Logger.Warn("indexer metrics", "err", err)
				}
			}
		}
	}
	m.fenced = cluster.FencedWrites(cfg.Registerer, cluster.JobIndexer)
	ix := &Indexer{pool: pool, kafka: kc, cfg: cfg, m: m, builds: make(chan struct{}, runtime.GOMAXPROCS(0))}
	if cfg.Registerer != nil {
		buffered := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "mink_index_buffer_bytes",
			Help: "Records held by indexers between fetch and range cut (keys, values, per-record overhead); bounded by the memory budget."},
			func() float64 { return float64(ix.buffered.Load()) })
		if err := cfg.Registerer.Register(buffered); err != nil {
			cfg.Logger.Warn("indexer metrics", "err", err)
		}
	}
	return ix
}

var (
	//go:embed sql/next_offset.sql
	nextOffsetSQL string
	//go:embed sql/range_insert.sql
	rangeInsertSQL string
	//go:embed sql/unknown_fields_add.sql
	unknownFieldsAddSQL string
)

// Run indexes the lease's partition until ctx is done. It returns
// pgstore.ErrFenced (wrapped) when Postgres rejects a write for a stale
// epoch; other errors are retried with backoff.
//
// The records read since the last range wait in a rangeBuffer, which says
// when to cut (range size, flush interval, memory budget); flush builds and
// records the range.
func (ix *Indexer) Run(ctx context.Context, l cluster.Lease) error {
	p := ix.start(ctx, l)
	if p == nil {
		return nil
	}
	defer p.reader.Close()
	var buf rangeBuffer
	defer func() { ix.buffered.Add(-buf.cost) }()
	for {
		if wait := buf.wait(time.Now(), ix.cfg.FlushInterval); wait > 0 {
			recs, ok := ix.poll(ctx, p, wait)
			if !ok {
				return nil
			}
			// One clock reading per fetch: the flush interval runs from
			// the fetch that brought a range's first record.
			now := time.Now()
			// The cost of the records added since the shared count was
			// last updated: it is updated once per fetch (and before a
			// cut), not per record, since the partitions' indexers would
			// contend for it record by record. Other partitions see a
			// fetch's records once it is added.
			var unshared int64
			for _, r := range recs {
				if r.Offset < p.next {
					r.Recycle()
					continue
				}
				if buf.overBudget(recordCost(r), ix.buffered.Load()+unshared, ix.cfg.MemoryBudget) {
					ix.buffered.Add(unshared)
					unshared = 0
					if done, err := ix.flush(ctx, p, &buf); done {
						return err
					}
				}
				unshared += buf.add(r, now)
				if buf.full(ix.cfg.RangeSize) {
					ix.buffered.Add(unshared)
					unshared = 0
					if done, err := ix.flush(ctx, p, &buf); done {
						return err
					}
				}
			}
			ix.buffered.Add(unshared)
		}
		if buf.due(time.Now(), ix.cfg.FlushInterval) {
			if done, err := ix.flush(ctx, p, &buf); done {
				return err
			}
		}
	}
}

// start opens the lease's partition, retrying every second until it can.
// It returns nil when Run must end: ctx is done, or the table was deleted.
func (ix *Indexer) start(ctx context.Context, l cluster.Lease) *partition {
	log := ix.cfg.Logger.With("scope", l.Scope, "epoch", l.Epoch, "partition", l.Partition)
	for {
		p, err := ix.open(ctx, l)
		if err == nil {
			p.log = log.With("table", p.table.FullName())
			p.log.Info("indexer: started", "offset", p.next)
			return p
		}
		if errors.Is(err, tables.ErrNotFound) {
			log.Info("indexer: table deleted; stopping")
			return nil
		}
		if ctx.Err() != nil {
			return nil // released while starting: not a failure
		}
		log.Warn("indexer: cannot start, retrying", "err", err)
		if !sleep(ctx, time.Second) {
			return nil
		}
	}
}

// poll waits up to wait for p's next records and sets the partition's lag.
// A failed fetch is logged and followed by a pause. It returns false when
// ctx is done.
func (ix *Indexer) poll(ctx context.Context, p *partition, wait time.Duration) ([]*kgo.Record, bool) {
	pctx, cancel := context.WithTimeout(ctx, wait)
	recs, err := p.reader.Poll(pctx)
	cancel()
	if ctx.Err() != nil {
		return nil, false
	}
	if o := p.reader.Offsets(); o.HighWatermark > 0 {
		ix.m.lag.With(p.labels).Set(float64(max(0, o.LastStable-p.next)))
	}
	if err != nil {
		// One warning per outage and partition, not one a second: at
		// thousands of partitions a Kafka outage would flood the log.
		if !p.fetchFailing {
			p.log.Warn("indexer: fetch failed; retrying (logged again when it succeeds)", "err", err)
			p.fetchFailing = true
		} else {
			p.log.Debug("indexer: fetch failed", "err", err)
		}
		if !sleep(ctx, 500*time.Millisecond) {
			return nil, false
		}
		return recs, true
	}
	if p.fetchFailing {
		p.log.Info("indexer: fetches succeed again")
		p.fetchFailing = false
	}
	return recs, true
}

// flush cuts buf into a range of p, records it, and empties buf. It
// returns done when Run must end: ctx is done (err nil), the range cannot
// be built, or the lease is fenced (err wraps pgstore.ErrFenced). Other
// errors of the insert are retried every second.
func (ix *Indexer) flush(ctx context.Context, p *partition, buf *rangeBuffer) (done bool, err error) {
	rg, err := ix.cutWaiting(ctx, p, buf.records, buf.control)
	if ctx.Err() != nil {
		return true, nil
	}
	if err != nil {
		return true, fmt.Errorf("indexer: build range: %w", err)
	}
	for {
		err = ix.insert(ctx, p, rg)
		if err == nil || ctx.Err() != nil {
			break
		}
		if errors.Is(err, pgstore.ErrFenced) {
			ix.m.fenced.Inc()
			p.log.Warn("indexer: fenced, stopping", "err", err)
			return true, err
		}
		p.log.Warn("indexer: cannot record range, retrying", "start", rg.start, "end", rg.end, "err", err)
		if !sleep(ctx, time.Second) {
			return true, nil
		}
	}
	if ctx.Err() != nil {
		return true, nil
	}
	p.next = rg.end
	ix.recorded(p, rg, buf.bytes)
	ix.buffered.Add(-buf.cost)
	// The range is recorded and its files built: nothing refers to the
	// records any more (the builders copied what they kept).
	kafka.Recycle(buf.records)
	buf.reset()
	return false, nil
}

// cutWaiting cuts buf (at most GOMAXPROCS builds at a time). While the
// range's writer schemas can be neither read nor fetched (registry or
// Postgres unreachable) the partition pauses with its records buffered and
// tries again every second: no record becomes a dead letter because of an
// outage (docs/design.md §4.7). It returns ctx's error when ctx ends.
func (ix *Indexer) cutWaiting(ctx context.Context, p *partition, buf []*kgo.Record, control bool) (*indexedRange, error) {
	var since, logged time.Time
	for {
		select {
		case ix.builds <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		rg, err := ix.cut(ctx, p, buf, control)
		<-ix.builds
		if !errors.Is(err, outage.ErrUnavailable) {
			if !since.IsZero() {
				ix.m.paused.With(p.labels).Set(0)
				p.log.Info("indexer: schemas available again", "paused", time.Since(since).Round(time.Millisecond))
			}
			return rg, err
		}
		if since.IsZero() {
			since = time.Now()
			ix.m.paused.With(p.labels).Set(1)
		}
		if time.Since(logged) > 30*time.Second {
			logged = time.Now()
			p.log.Warn("indexer: waiting for the range's writer schemas", "start", p.next, "err", err)
		}
		if !sleep(ctx, time.Second) {
			return nil, ctx.Err()
		}
	}
}

// recorded updates metrics and hands the built files to OnBuilt once a
// range is in Postgres.
func (ix *Indexer) recorded(p *partition, rg *indexedRange, bytes int64) {
	ix.m.records.With(p.labels).Add(float64(rg.records))
	ix.m.bytes.With(p.labels).Add(float64(bytes))
	ix.m.ranges.With(p.labels).Inc()
	ix.m.indexedOffset.With(p.labels).Set(float64(rg.end))
	if o := p.reader.Offsets(); o.HighWatermark > 0 {
		ix.m.lag.With(p.labels).Set(float64(max(0, o.LastStable-rg.end)))
	}
	if rg.res.DLQ != nil {
		ix.m.deadLetters.With(p.labels).Add(float64(rg.res.DLQ.Stats.RecordCount))
	}
	if rg.res.Unknown > 0 {
		ix.m.unknownFields.With(p.labels).Add(float64(rg.res.Unknown))
		if !p.unknownLogged {
			p.unknownLogged = true
			ix.cfg.Logger.Info("indexer: JSON fields match no column (counted; mink table status shows them)",
				"table", p.table.FullName(), "partition", p.lease.Partition, "count", rg.res.Unknown, "examples", rg.res.UnknownExamples)
		}
	}
	if ix.cfg.OnBuilt != nil {
		for _, f := range rg.files(p) {
			ix.cfg.OnBuilt(f.Key(f.table), f.File.Bytes)
		}
	}
}

// partition is the state of one held partition lease's indexer.
type partition struct {
	lease      cluster.Lease
	table, dlq *tables.Table
	// next is the offset the next range starts at: the end of the last
	// indexed range.
	next   int64
	reader *kafka.Reader
	labels prometheus.Labels
	log    *slog.Logger
	// unknownLogged: the first range with unknown JSON fields is logged,
	// the others only counted.
	unknownLogged bool
	// fetchFailing is true from a failed fetch to the next good one.
	fetchFailing bool
}

// indexedRange is a cut range and its built data files.
type indexedRange struct {
	start, end int64
	records    int64
	schema     int // the table's schema version the files were encoded with
	res        *datafile.Result
}

// tableFile is a range's data file in one of the partition's tables.
type tableFile struct {
	table *tables.Table
	commit.DataFile
}

// files returns rg's data files: the table's and the dead-letter table's,
// each when it has rows.
func (rg *indexedRange) files(p *partition) []tableFile {
	var out []tableFile
	for _, f := range []struct {
		t *tables.Table
		f *datafile.File
	}{{p.table, rg.res.Data}, {p.dlq, rg.res.DLQ}} {
		if f.f != nil {
			out = append(out, tableFile{f.t, commit.DataFile{Partition: p.lease.Partition, Start: rg.start, End: rg.end, Schema: rg.schema, File: f.f}})
		}
	}
	return out
}

func (ix *Indexer) open(ctx context.Context, l cluster.Lease) (*partition, error) {
	t, err := tables.Get(ctx, ix.pool, l.TableID)
	if err != nil {
		return nil, err
	}
	dlq, err := tables.DLQ(ctx, ix.pool, l.TableID)
	if err != nil {
		return nil, err
	}
	var next int64
	if err := ix.pool.QueryRow(ctx, nextOffsetSQL, l.TableID, l.Partition).Scan(&next); err != nil {
		return nil, fmt.Errorf("indexer: next offset: %w", err)
	}
	if _, err := t.Spec(); err != nil {
		return nil, err
	}
	r, err := ix.kafka.NewReader(t.Topic, l.Partition, next)
	if err != nil {
		return nil, err
	}
	return &partition{lease: l, table: t, dlq: dlq, next: next, reader: r,
		labels: prometheus.Labels{"table": t.FullName(), "partition": fmt.Sprint(l.Partition)}}, nil
}

// cut turns the buffered records (data and control) into a range that
// starts where the previous one ended and ends after the last record,
// encoded with the schema version its records need (rangefile.Encode:
// a writer schema the table has not seen evolves the table schema first).
// control says whether buf holds control records.
func (ix *Indexer) cut(ctx context.Context, p *partition, buf []*kgo.Record, control bool) (*indexedRange, error) {
	data := buf
	if control {
		data = make([]*kgo.Record, 0, len(buf))
		for _, r := range buf {
			if !r.Attrs.IsControl() {
				data = append(data, r)
			}
		}
	}
	if !p.table.ValueFormat.Registry() && !p.table.KeyFormat.Registry() {
		// A json table's ranges take its newest version: follow an alter
		// or a version another node inferred.
		newest, err := ix.cfg.Schemas.Newest(ctx, p.table.ID)
		if err != nil {
			return nil, err
		}
		if newest != p.table.Schema.ID {
			t, err := tables.Get(ctx, ix.pool, p.table.ID)
			if err != nil {
				return nil, pgstore.Unavailable(err)
			}
			p.table = t
		}
	}
	res, schema, err := rangefile.Encode(ctx, ix.cfg.Schemas, p.table, data, schemas.Choose)
	if err != nil {
		return nil, err
	}
	return &indexedRange{start: p.next, end: buf[len(buf)-1].Offset + 1, records: int64(len(data)), schema: schema, res: res}, nil
}

// insert records rg, its data files and its unknown JSON fields in one
// transaction fenced by p's lease epoch (the trigger on ranges).
func (ix *Indexer) insert(ctx context.Context, p *partition, rg *indexedRange) error {
	l := p.lease
	tx, err := ix.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, rangeInsertSQL, l.TableID, l.Partition, rg.start, rg.end, rg.records, l.Scope, l.Holder, l.Epoch); err != nil {
		return pgstore.Fenced(err)
	}
	for _, f := range rg.files(p) {
		if err := commit.InsertDataFile(ctx, tx, f.table, &f.DataFile); err != nil {
			return err
		}
	}
	if rg.res.Unknown > 0 {
		if _, err := tx.Exec(ctx, unknownFieldsAddSQL, l.TableID, l.Partition, rg.res.Unknown, rg.res.UnknownExamples,
			datafile.MaxUnknownExamples); err != nil {
			return err
		}
	}
	return pgstore.Fenced(tx.Commit(ctx))
}

func sleep(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}
