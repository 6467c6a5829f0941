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
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/cluster"
	"github.com/minkhq/mink/datafile"
	"github.com/minkhq/mink/kafka"
	"github.com/minkhq/mink/pgstore"
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

// recordOverhead approximates the memory of one buffered record beyond its
// key and value (franz-go's Record, its headers slice, batch bookkeeping).
const recordOverhead = 200

type metrics struct {
	records, bytes, ranges, deadLetters *prometheus.CounterVec
	unknownFields                       *prometheus.CounterVec
	indexedOffset, lag                  *prometheus.GaugeVec
	fenced                              prometheus.Counter
}

// New returns an indexer. It panics on a cfg that Validate rejects (`mink
// serve` validates its settings before it starts anything).
func New(pool *pgxpool.Pool, kc *kafka.Client, cfg Config) *Indexer {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		panic(err)
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
	}
	if cfg.Registerer != nil {
		for _, c := range []prometheus.Collector{m.records, m.bytes, m.ranges, m.deadLetters, m.unknownFields, m.indexedOffset, m.lag} {
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

// Run indexes the lease's partition until ctx is done. It returns
// pgstore.ErrFenced (wrapped) when Postgres rejects a write for a stale
// epoch; other errors are retried with backoff.
func (ix *Indexer) Run(ctx context.Context, l cluster.Lease) error {
	log := ix.cfg.Logger.With("scope", l.Scope, "epoch", l.Epoch, "partition", l.Partition)
	var p *partition
	for {
		var err error
		p, err = ix.open(ctx, l)
		if err == nil {
			break
		}
		if errors.Is(err, tables.ErrNotFound) {
			log.Info("indexer: table deleted; stopping")
			return nil
		}
		log.Warn("indexer: cannot start, retrying", "err", err)
		if !sleep(ctx, time.Second) {
			return nil
		}
	}
	defer p.reader.Close()
	log = log.With("table", p.table.FullName())
	log.Info("indexer: started", "offset", p.next)
	labels := prometheus.Labels{"table": p.table.FullName(), "partition": fmt.Sprint(l.Partition)}

	var buf []*kgo.Record
	var bufBytes, bufCost int64
	var firstAt time.Time
	defer func() { ix.buffered.Add(-bufCost) }()
	// flush cuts the buffered records into a range and records it. It
	// returns done when Run must end (ctx done, or fenced with err).
	flush := func() (done bool, err error) {
		select {
		case ix.builds <- struct{}{}:
		case <-ctx.Done():
			return true, nil
		}
		rg, err := p.cut(buf)
		<-ix.builds
		if err != nil {
			return true, fmt.Errorf("indexer: build range: %w", err)
		}
		for {
			err = ix.insert(ctx, l, p, rg)
			if err == nil || ctx.Err() != nil {
				break
			}
			if errors.Is(err, pgstore.ErrFenced) {
				ix.m.fenced.Inc()
				log.Warn("indexer: fenced, stopping", "err", err)
				return true, err
			}
			log.Warn("indexer: cannot record range, retrying", "start", rg.start, "end", rg.end, "err", err)
			if !sleep(ctx, time.Second) {
				return true, nil
			}
		}
		if ctx.Err() != nil {
			return true, nil
		}
		p.next = rg.end
		ix.recorded(labels, l, p, rg, bufBytes)
		ix.buffered.Add(-bufCost)
		buf, bufBytes, bufCost = nil, 0, 0
		return false, nil
	}
	for {
		wait := time.Second
		if len(buf) > 0 {
			wait = time.Until(firstAt.Add(ix.cfg.FlushInterval))
		}
		if wait > 0 {
			pctx, cancel := context.WithTimeout(ctx, wait)
			recs, err := p.reader.Poll(pctx)
			cancel()
			if ctx.Err() != nil {
				return nil
			}
			if o := p.reader.Offsets(); o.HighWatermark > 0 {
				ix.m.lag.With(labels).Set(float64(max(0, o.LastStable-p.next)))
			}
			if err != nil {
				log.Warn("indexer: fetch failed", "err", err)
				if !sleep(ctx, 500*time.Millisecond) {
					return nil
				}
			}
			for _, r := range recs {
				if r.Offset < p.next {
					continue
				}
				// Over the node's budget: cut what this partition holds
				// now, a smaller range, rather than hold more.
				cost := int64(len(r.Key)+len(r.Value)) + recordOverhead
				if len(buf) > 0 && ix.buffered.Load()+cost > ix.cfg.MemoryBudget {
					if done, err := flush(); done {
						return err
					}
				}
				if len(buf) == 0 {
					firstAt = time.Now()
				}
				buf = append(buf, r)
				bufBytes += int64(len(r.Key) + len(r.Value))
				bufCost += cost
				ix.buffered.Add(cost)
				// Cut at the target size even in the middle of a fetch, so
				// ranges (and the memory a build needs) stay near it.
				if bufBytes >= ix.cfg.RangeSize {
					if done, err := flush(); done {
						return err
					}
				}
			}
		}
		if len(buf) > 0 && time.Since(firstAt) >= ix.cfg.FlushInterval {
			if done, err := flush(); done {
				return err
			}
		}
	}
}

// recorded updates metrics and hands the built files to OnBuilt once a
// range is in Postgres.
func (ix *Indexer) recorded(labels prometheus.Labels, l cluster.Lease, p *partition, rg *indexedRange, bytes int64) {
	ix.m.records.With(labels).Add(float64(rg.records))
	ix.m.bytes.With(labels).Add(float64(bytes))
	ix.m.ranges.With(labels).Inc()
	ix.m.indexedOffset.With(labels).Set(float64(rg.end))
	if o := p.reader.Offsets(); o.HighWatermark > 0 {
		ix.m.lag.With(labels).Set(float64(max(0, o.LastStable-rg.end)))
	}
	if rg.res.DLQ != nil {
		ix.m.deadLetters.With(labels).Add(float64(rg.res.DLQ.Stats.RecordCount))
	}
	if rg.res.Unknown > 0 {
		ix.m.unknownFields.With(labels).Add(float64(rg.res.Unknown))
		if !p.unknownLogged {
			p.unknownLogged = true
			ix.cfg.Logger.Info("indexer: JSON fields match no column (counted; mink table status shows them)",
				"table", p.table.FullName(), "partition", l.Partition, "count", rg.res.Unknown, "examples", rg.res.UnknownExamples)
		}
	}
	if ix.cfg.OnBuilt != nil {
		if f := rg.res.Data; f != nil {
			ix.cfg.OnBuilt(p.table.DataFileKey(l.Partition, rg.start, rg.end, datafile.EncoderVersion), f.Bytes)
		}
		if f := rg.res.DLQ; f != nil {
			ix.cfg.OnBuilt(p.dlq.DataFileKey(l.Partition, rg.start, rg.end, datafile.EncoderVersion), f.Bytes)
		}
	}
}

type partition struct {
	table, dlq *tables.Table
	spec       *datafile.Spec
	next       int64
	reader     *kafka.Reader
	// unknownLogged: the first range with unknown JSON fields is logged,
	// the others only counted.
	unknownLogged bool
}

type indexedRange struct {
	start, end int64
	records    int64
	res        *datafile.Result
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
	err = ix.pool.QueryRow(ctx, `
		SELECT coalesce((SELECT max(end_offset) FROM ranges WHERE table_id = $1 AND partition = $2),
		                (SELECT start_offset FROM partitions WHERE table_id = $1 AND partition = $2))`,
		l.TableID, l.Partition).Scan(&next)
	if err != nil {
		return nil, fmt.Errorf("indexer: next offset: %w", err)
	}
	spec, err := t.Spec()
	if err != nil {
		return nil, err
	}
	r, err := ix.kafka.NewReader(t.Topic, l.Partition, next)
	if err != nil {
		return nil, err
	}
	return &partition{table: t, dlq: dlq, next: next, reader: r, spec: spec}, nil
}

// cut turns the buffered records (data and control) into a range that
// starts where the previous one ended and ends after the last record.
func (p *partition) cut(buf []*kgo.Record) (*indexedRange, error) {
	data := make([]*kgo.Record, 0, len(buf))
	for _, r := range buf {
		if !r.Attrs.IsControl() {
			data = append(data, r)
		}
	}
	res, err := datafile.Build(p.spec, data)
	if err != nil {
		return nil, err
	}
	return &indexedRange{start: p.next, end: buf[len(buf)-1].Offset + 1, records: int64(len(data)), res: res}, nil
}

func (ix *Indexer) insert(ctx context.Context, l cluster.Lease, p *partition, rg *indexedRange) error {
	tx, err := ix.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	_, err = tx.Exec(ctx, `
		INSERT INTO ranges (table_id, partition, start_offset, end_offset, record_count, lease_scope, lease_holder, lease_epoch)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		l.TableID, l.Partition, rg.start, rg.end, rg.records, l.Scope, l.Holder, l.Epoch)
	if err != nil {
		return pgstore.Fenced(err)
	}
	if err := insertFile(ctx, tx, p.table, l.Partition, rg, rg.res.Data); err != nil {
		return err
	}
	if err := insertFile(ctx, tx, p.dlq, l.Partition, rg, rg.res.DLQ); err != nil {
		return err
	}
	if rg.res.Unknown > 0 {
		if _, err := tx.Exec(ctx, addUnknownFields, l.TableID, l.Partition, rg.res.Unknown, rg.res.UnknownExamples,
			datafile.MaxUnknownExamples); err != nil {
			return err
		}
	}
	return pgstore.Fenced(tx.Commit(ctx))
}

// addUnknownFields adds a range's unknown JSON fields to its partition's
// count, in the transaction that inserts the range (so they are counted
// once), and keeps the first $5 distinct example paths, earliest first.
const addUnknownFields = `
	INSERT INTO unknown_fields AS u (table_id, partition, field_count, examples)
	VALUES ($1, $2, $3, $4)
	ON CONFLICT (table_id, partition) DO UPDATE SET
	    field_count = u.field_count + excluded.field_count,
	    examples = CASE WHEN cardinality(u.examples) >= $5::int THEN u.examples ELSE ARRAY(
	        SELECT e FROM unnest(u.examples || excluded.examples) WITH ORDINALITY AS x(e, n)
	        GROUP BY e ORDER BY min(n) LIMIT $5::int) END`

func insertFile(ctx context.Context, tx pgx.Tx, t *tables.Table, partition int32, rg *indexedRange, f *datafile.File) error {
	if f == nil {
		return nil
	}
	_, err := tx.Exec(ctx, `
		INSERT INTO data_files (table_id, partition, start_offset, end_offset, encoder_version, schema_id, path,
		                        file_size, sha256, record_count, stats, min_timestamp, max_timestamp)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
		t.ID, partition, rg.start, rg.end, datafile.EncoderVersion, t.Schema.ID,
		t.DataFileKey(partition, rg.start, rg.end, datafile.EncoderVersion),
		len(f.Bytes), f.SHA256[:], f.Stats.RecordCount, f.Stats,
		pgstore.Timestamptz(f.Stats.MinTimestamp), pgstore.Timestamptz(f.Stats.MaxTimestamp))
	return err
}

func sleep(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}
