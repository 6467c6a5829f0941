package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"
	"golang.org/x/sync/errgroup"

	"github.com/minkhq/mink/cluster"
	"github.com/minkhq/mink/codec"
	"github.com/minkhq/mink/datafile"
	"github.com/minkhq/mink/indexer"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/kafka"
	"github.com/minkhq/mink/pgstore"
	"github.com/minkhq/mink/schemas"
	"github.com/minkhq/mink/tables"
)

const (
	// idxTopic is the topic of flight JSON values the raw, string and json
	// tables read.
	idxTopic = "flights"
	// idxTopicAvro and idxTopicProtobuf hold the same flight records in
	// Avro and in Protobuf (Confluent wire format), for the avro and
	// protobuf tables; their schemas are the latest of subjects
	// <topic>-value.
	idxTopicAvro     = "flights_avro"
	idxTopicProtobuf = "flights_protobuf"
	// idxPartitions is the topic's partition count; one indexer runs per
	// partition.
	idxPartitions = 4
	// idxRangeSize is the range size the indexers cut at, in bytes of
	// keys and values (the indexer's default, set explicitly). The
	// references encode the same ranges.
	idxRangeSize = 16 << 20
	// idxFlushInterval is the indexers' flush interval (the default).
	idxFlushInterval = 2 * time.Second
	// idxQuickRecords is the input size with -quick, in records.
	idxQuickRecords = 200_000
	// idxTimeout bounds one timed indexing or copying pass.
	idxTimeout = 10 * time.Minute
	// idxMB is the byte count of the MB in "MB/s" (decimal megabyte).
	idxMB = 1e6
)

// idxFormats are the value formats indexed, each into its own table: raw,
// string and json over the JSON topic, avro and protobuf over a topic of
// their own with the same records.
var idxFormats = []codec.Format{codec.Raw, codec.String, codec.JSON, codec.Avro, codec.Protobuf}

// idxTopicOf returns the topic the table of value format f reads.
func idxTopicOf(f codec.Format) string {
	switch f {
	case codec.Avro:
		return idxTopicAvro
	case codec.Protobuf:
		return idxTopicProtobuf
	default:
		return idxTopic
	}
}

func init() {
	register(Scenario{
		Name:  "indexing",
		Title: "Indexing throughput per core",
		About: `The flight records (` + FlightsFile + `, one record each) are produced once, before any timing, on an
in-process kfake broker reached over TCP: as JSON values into a topic of ` + fmt.Sprint(idxPartitions) + ` partitions, and the same
records in Avro and in Protobuf (Confluent wire format: magic byte, schema id, for Protobuf the message
indexes [0]; schemas equivalent to the json table's — every column optional, the date an Avro
timestamp-micros or a google.protobuf.Timestamp — registered in an in-process srfake registry reached over
HTTP) into a topic each of as many partitions. Each run indexes the whole topic into a fresh table per value format
(raw, string, json with the flights schema over the JSON topic; avro and protobuf over theirs, their columns
declared from the subject's latest schema as the admin API does) through the real path — one indexer.Run per
partition lease: read_committed fetch, decode (avro, protobuf: the writer schema of each record's id
through schemas.Store, fetched from the registry and stored in Postgres at the table's first range),
deterministic Parquet encode, statistics, fenced insert of the range into Postgres — and stops when every
partition's indexed end reaches its high watermark. Ranges are cut at 16 MiB or 2 s after their first
record (the defaults), so a range of Avro or Protobuf values holds more records than one of JSON values.
Per core: records, or input MB (value bytes as produced, wire header included; 1 MB = 10^6 bytes), divided
by the CPU seconds (user + system, getrusage) the bench process spent in the timed window, whatever
the parallelism; the in-process broker's and registry's CPU is in that count for Mink and the copying pipeline
alike, Postgres's (another process) is not. For avro and protobuf also the JSON-equivalent MB/s: records/s ×
the mean JSON value size of the same records, the rate at which the json table would have to read JSON to
index as many records. References in the same run, on each partition's 16 MiB ranges: the bare
Parquet encode (arrow-go pqarrow writing the already-decoded rows of each range with the encoder's
pinned settings — its file is byte-identical to the encoder's, checked on the first range — the
physical limit of our encoder), the bare consume (one franz-go consumer reading the whole topic with read_committed and its
default fetch settings, records discarded: the limit of reading it), the composed limit (the rate of doing the two one after the
other, 1 / (1/consume + 1/encode), each run's; raw and json indexing's target is ≥ 0.8× it), Mink's encoder alone (datafile.Build on the same records in
memory; for avro and protobuf schemas.Store.Spec, each record's header looked up among the writer schemas,
then datafile.Build), and a copying pipeline as a Go user writes it today (franz-go consumer, JSON decoded into
Arrow, apache/iceberg-go appending Parquet files to a local file:// warehouse through its hadoop
catalog).`,
		Run: runIndexing,
	})
}

// idxEnv is what every timed pass of the scenario shares: the broker with
// the produced topics, the metadata database, the schema store and Mink's
// Kafka client.
type idxEnv struct {
	brokers []string
	pool    *pgxpool.Pool
	kc      *kafka.Client
	// store keeps the tables' schemas, the in-process registry its
	// source; one per process, as a node has.
	store *schemas.Store
	// ends is each partition's end offset (its record count), the same
	// in every topic.
	ends []int64
	// records and bytes are the input: record count and value bytes of
	// the JSON topic.
	records, bytes int64
	// topicBytes is the value bytes of each topic.
	topicBytes map[string]int64
	logger     *slog.Logger
}

// idxCPU returns the CPU time (user + system) the process has used.
func idxCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(fmt.Sprintf("getrusage: %v", err))
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// idxWindow is one timed window: the CPU time and wall time it took.
type idxWindow struct {
	cpu, wall time.Duration
}

// idxMeasure runs fn after a garbage collection (so that earlier garbage
// is not charged to it) and returns its CPU and wall time.
func idxMeasure(fn func() error) (idxWindow, error) {
	runtime.GC()
	c0, t0 := idxCPU(), time.Now()
	err := fn()
	return idxWindow{cpu: idxCPU() - c0, wall: time.Since(t0)}, err
}

// perCore returns n per CPU second of w.
func (w idxWindow) perCore(n float64) float64 { return n / w.cpu.Seconds() }

func runIndexing(ctx context.Context, h *H) error {
	limit := ifQuick(h, 0, idxQuickRecords)
	values, err := flightValues(h, limit)
	if err != nil {
		return err
	}
	path, _ := h.Data(FlightsFile) // found: flightValues read it
	// The registry is up before the records are encoded: their headers
	// carry the ids it assigns.
	reg := srfake.New()
	defer reg.Close()
	avroID, _, err := reg.RegisterSchema(idxTopicAvro+"-value", sr.Schema{Schema: FlightsAvro, Type: sr.TypeAvro})
	if err != nil {
		return fmt.Errorf("register subject %s-value: %w", idxTopicAvro, err)
	}
	protoID, _, err := reg.RegisterSchema(idxTopicProtobuf+"-value", sr.Schema{Schema: FlightsProto, Type: sr.TypeProtobuf})
	if err != nil {
		return fmt.Errorf("register subject %s-value: %w", idxTopicProtobuf, err)
	}
	avroValues, protoValues, err := flightsRegistry(path, limit, avroID, protoID)
	if err != nil {
		return err
	}
	if len(avroValues) != len(values) || len(protoValues) != len(values) {
		return fmt.Errorf("flights: %d JSON values, %d Avro, %d Protobuf", len(values), len(avroValues), len(protoValues))
	}
	kf, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(idxPartitions, idxTopic, idxTopicAvro, idxTopicProtobuf))
	if err != nil {
		return err
	}
	defer kf.Close()
	env := &idxEnv{brokers: kf.ListenAddrs(), records: int64(len(values)), topicBytes: map[string]int64{},
		logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	topicValues := map[string][][]byte{idxTopic: values, idxTopicAvro: avroValues, idxTopicProtobuf: protoValues}
	for _, topic := range []string{idxTopic, idxTopicAvro, idxTopicProtobuf} {
		t0 := time.Now()
		n, err := produce(ctx, env.brokers, topic, idxPartitions, topicValues[topic])
		if err != nil {
			return err
		}
		env.topicBytes[topic] = n
		h.Logf("produced %d records (%.1f MB of values, %.1f B each) into %s in %v", len(values), float64(n)/idxMB,
			float64(n)/float64(len(values)), topic, time.Since(t0).Round(time.Millisecond))
	}
	env.bytes = env.topicBytes[idxTopic]
	env.ends = make([]int64, idxPartitions)
	for i := range values {
		env.ends[i%idxPartitions]++
	}

	pgURL, err := h.Postgres(ctx)
	if err != nil {
		return err
	}
	if env.pool, err = pgstore.Open(ctx, pgstore.Config{URL: pgURL}); err != nil {
		return err
	}
	defer env.pool.Close()
	if env.kc, err = kafka.New(kafka.Config{Brokers: env.brokers, Logger: env.logger}); err != nil {
		return err
	}
	defer env.kc.Close()
	registry, err := schemas.NewRegistry(schemas.RegistryConfig{URL: reg.URL()})
	if err != nil {
		return err
	}
	defer registry.Close()
	env.store = schemas.NewStore(env.pool, registry)
	profDir, err := h.TempDir()
	if err != nil {
		return err
	}

	idxDeclare(h)
	samples := map[string][]float64{}
	add := func(name string, v float64) {
		h.Add(name, v)
		samples[name] = append(samples[name], v)
	}
	profiles := map[string]string{}
	var cpuNotes []string
	// digests are the value columns' digests of the decoded rows of each
	// format (idxDigest): avro and protobuf must decode to json's rows.
	digests := map[codec.Format]string{}
	var chunks [][]*kgo.Record
	chunksOf := ""
	for _, f := range idxFormats {
		topic := idxTopicOf(f)
		if chunksOf != topic {
			chunks, chunksOf = nil, topic
			runtime.GC() // the previous topic's records
			chunks = idxChunks(topic, topicValues[topic])
		}
		def := tables.Definition{Namespace: "bench", Name: string(f), Topic: topic, ValueFormat: string(f), KeyFormat: string(codec.Raw)}
		// encode is Mink's encoder on one range: datafile.Build with the
		// spec of the table (for registry formats, schemas.Store.Spec of
		// the range: its writer schemas, the schema version).
		var encode func(records []*kgo.Record) (*datafile.Result, error)
		if f.Registry() {
			if err := idxRegistryDefinition(ctx, env.store, &def); err != nil {
				return err
			}
			def.Name = string(f) + "_encoder"
			tbl, err := tables.Create(ctx, env.pool, "mink", def, nil)
			if err != nil {
				return err
			}
			// The table's first range decides the writer schema (a
			// registry fetch, a Postgres transaction); the indexer pays
			// it once per table, outside the encoder's timing here.
			if _, err := env.store.Spec(ctx, tbl, chunks[0], -1); err != nil {
				return err
			}
			encode = func(records []*kgo.Record) (*datafile.Result, error) {
				spec, err := env.store.Spec(ctx, tbl, records, -1)
				if err != nil {
					return nil, err
				}
				return datafile.Build(spec, records)
			}
		} else {
			if f == codec.JSON {
				def.Schema = json.RawMessage(FlightsSchema)
			}
			schema, _, err := tables.Schemas(&def)
			if err != nil {
				return err
			}
			spec := &datafile.Spec{Schema: schema, KeyFormat: codec.Raw, ValueFormat: f}
			encode = func(records []*kgo.Record) (*datafile.Result, error) { return datafile.Build(spec, records) }
		}
		var bare []arrow.Table
		var encCPU, ixCPU []time.Duration
		var ranges []float64
		for run := range h.Runs {
			// Mink's encoder alone; the first run's files are the decoded
			// rows the bare encode writes.
			files := make([][]byte, len(chunks))
			w, err := idxMeasure(func() error {
				return idxParallel(len(chunks), func(i int) error {
					res, err := encode(chunks[i])
					if err != nil {
						return err
					}
					if res.DLQ != nil {
						return fmt.Errorf("%s: %d records went to the dead-letter file", f, res.DLQ.Stats.RecordCount)
					}
					if run == 0 {
						files[i] = res.Data.Bytes
					}
					return nil
				})
			})
			if err != nil {
				return err
			}
			encCPU = append(encCPU, w.cpu)
			add(string(f)+": Mink encoder alone", w.perCore(float64(env.records)))
			if run == 0 {
				if bare, err = idxDecoded(ctx, files); err != nil {
					return err
				}
				// The bare encode writes what the encoder writes: same
				// rows, same settings, so the same bytes.
				b, err := idxEncode(bare[0])
				if err != nil {
					return err
				}
				switch same, err := idxSameFile(b, files[0]); {
				case err != nil:
					return fmt.Errorf("%s: compare the bare encode's file with the encoder's: %w", f, err)
				case same == idxFileDiffers:
					h.Note("%s: the bare encode's file differs from the encoder's (%d bytes, encoder %d): the settings are not the same.", f, len(b), len(files[0]))
				case same == idxFileStatsOrder:
					h.Note("%s: the bare encode's file of the first range equals the encoder's but for the order of the footer's encoding_stats entries (a column's dictionary fell back to plain part way: arrow-go lists them in Go map order, the encoder in one fixed order, datafile.canonicalFooter); its pages and the rest of its footer are byte-identical.", f)
				}
				if err := idxCheckRows(h, f, bare, digests); err != nil {
					return err
				}
			}

			if w, err = idxMeasure(func() error { return idxBareEncode(bare) }); err != nil {
				return err
			}
			encodeRate := w.perCore(float64(env.records))
			add(string(f)+": bare Parquet encode", encodeRate)
			if w, err = idxConsume(ctx, env.brokers, topic, env.records); err != nil {
				return err
			}
			consumeRate := w.perCore(float64(env.records))
			add(string(f)+": bare consume", consumeRate)
			add(string(f)+": composed limit", idxComposed(consumeRate, encodeRate))

			def.Name = fmt.Sprintf("%s_%d", f, run)
			prof := ""
			if run == 0 {
				prof = filepath.Join(profDir, "indexing-"+string(f)+".pprof")
				profiles[string(f)] = prof
			}
			w, meta, err := idxMink(ctx, env, def, prof)
			if err != nil {
				return err
			}
			ixCPU = append(ixCPU, w.cpu)
			add(string(f)+": indexing", w.perCore(float64(env.records)))
			add(string(f)+": indexing against the composed limit", w.perCore(float64(env.records)))
			add(string(f)+": indexing input", w.perCore(float64(env.topicBytes[topic])/idxMB))
			if f.Registry() {
				add(string(f)+": indexing, JSON-equivalent input", w.perCore(float64(env.bytes)/idxMB))
			}
			if f == codec.JSON {
				add("Mink: data at rest", 0)
				add("Mink: metadata in Postgres", float64(meta.bytes)/idxMB)
			}
			h.Logf("%s run %d: indexing %v CPU in %v wall, %d ranges", f, run+1, w.cpu.Round(time.Millisecond), w.wall.Round(time.Millisecond), meta.ranges)
			ranges = append(ranges, float64(meta.ranges))
		}
		for _, t := range bare {
			t.Release()
		}
		cpuNotes = append(cpuNotes, fmt.Sprintf("%s: encoder alone %.1f CPU-s of indexing's %.1f; %.0f ranges indexed (the references encode %d)",
			f, idxMedianDur(encCPU).Seconds(), idxMedianDur(ixCPU).Seconds(), median(ranges), len(chunks)))
	}
	chunks = nil
	h.Note("Input per record (mean value size, wire header included): json %.1f B, avro %.1f B (%.2f× json), protobuf %.1f B (%.2f× json). "+
		"For avro and protobuf, \"indexing\" is compared with json's records/s per core (target ≥ 1.00×: as many flight records per CPU second as json); "+
		"\"indexing input\" is their own value bytes per CPU second, which cannot reach json's MB/s while the per-record Parquet encode dominates, since the same records are %.1f× and %.1f× smaller; "+
		"\"indexing, JSON-equivalent input\" is records/s per core × the mean JSON value size of the same records (%.1f B), i.e. the JSON MB/s the json table would have to read to index as many records, compared with json's indexing input (target ≥ 1.00×).",
		idxMean(env.topicBytes[idxTopic], env.records),
		idxMean(env.topicBytes[idxTopicAvro], env.records), float64(env.topicBytes[idxTopicAvro])/float64(env.bytes),
		idxMean(env.topicBytes[idxTopicProtobuf], env.records), float64(env.topicBytes[idxTopicProtobuf])/float64(env.bytes),
		float64(env.bytes)/float64(env.topicBytes[idxTopicAvro]), float64(env.bytes)/float64(env.topicBytes[idxTopicProtobuf]),
		idxMean(env.bytes, env.records))
	m0 := func(name string) float64 { return median(samples[name]) }
	h.Note("Against their own bare Parquet encode (the figures above): avro indexing %.2f×, protobuf indexing %.2f×, json indexing %.2f×.",
		m0("avro: indexing")/m0("avro: bare Parquet encode"), m0("protobuf: indexing")/m0("protobuf: bare Parquet encode"),
		m0("json: indexing")/m0("json: bare Parquet encode"))

	// The copying pipeline, json rows of the same table schema.
	def := tables.Definition{Namespace: "bench", Name: "copy", Topic: idxTopic, ValueFormat: string(codec.JSON),
		KeyFormat: string(codec.Raw), Schema: json.RawMessage(FlightsSchema)}
	schema, _, err := tables.Schemas(&def)
	if err != nil {
		return err
	}
	for run := range h.Runs {
		dir, err := h.TempDir()
		if err != nil {
			return err
		}
		prof := ""
		if run == 0 {
			prof = filepath.Join(profDir, "copying.pprof")
			profiles["copying"] = prof
		}
		res, err := runCopying(ctx, copyingConfig{Brokers: env.brokers, Topic: idxTopic, Records: env.records,
			Schema: schema, Warehouse: dir, Table: fmt.Sprintf("flights_%d", run), CommitBytes: idxPartitions * idxRangeSize,
			Profile: prof})
		if err != nil {
			return fmt.Errorf("copying pipeline: %w", err)
		}
		add("copying pipeline", res.Window.perCore(float64(env.records)))
		add("copying pipeline input", res.Window.perCore(float64(env.bytes)/idxMB))
		add("copying pipeline: data at rest", float64(res.DataBytes)/idxMB)
		add("copying pipeline: metadata at rest", float64(res.MetadataBytes)/idxMB)
		h.Logf("copying run %d: %v CPU in %v wall, %d commits, %d data files", run+1,
			res.Window.cpu.Round(time.Millisecond), res.Window.wall.Round(time.Millisecond), res.Commits, res.DataFiles)
		if run == 0 {
			h.Note("Copying pipeline: one franz-go consumer of all %d partitions; each record's value is decoded with arrow-go's RecordBuilder.UnmarshalJSON and its _kafka struct built from the record; every %d MiB of consumed values (%d × the indexer's range size, %d commits here) one iceberg-go transaction appends the batch (partitioned by _kafka.partition like Mink's tables, %d data files in all) and commits through the hadoop catalog; Parquet compression set to snappy, Mink's codec (iceberg-go's default is zstd).",
				idxPartitions, idxPartitions*idxRangeSize>>20, idxPartitions, res.Commits, res.DataFiles)
		}
	}

	h.Note("Per pass of the %d records (medians): %s. The rest of indexing is the Kafka fetch (broker and client, snappy-compressed batches as the producer sent them), range bookkeeping, the Postgres inserts and the garbage collector.",
		env.records,
		strings.Join(cpuNotes, "; "))
	h.Note("Mink's data at rest is 0 by construction: the indexer builds each data file once, for its size, checksum and statistics, and keeps only those in Postgres (ranges and data_files rows, pg_column_size; the writer's commit, not run here, adds manifests). Copying pipeline at rest: the warehouse directory's data/ and metadata/ files.")

	// The composed limit leaves out all that Mink does between the fetch
	// and the encode (decoding values, building the Arrow rows, the
	// statistics): Mink's encoder alone against it says what is left for
	// the fetch.
	var encNotes []string
	for _, f := range idxFormats {
		if c := m0(string(f) + ": composed limit"); c > 0 {
			encNotes = append(encNotes, fmt.Sprintf("%s %.2f×", f, m0(string(f)+": Mink encoder alone")/c))
		}
	}
	h.Note("Mink's encoder alone (no Kafka: decode, Arrow rows, Parquet encode, statistics, SHA-256) against the composed limit, medians: %s. "+
		"Indexing is that encoder plus the fetch, so it cannot pass these ratios (a ratio under 0.8× means the 0.8× target is out of reach whatever the fetch costs).",
		strings.Join(encNotes, ", "))

	// Where the time goes, for each missed target.
	m := func(name string) float64 { return median(samples[name]) }
	type miss struct{ what, prof string }
	var misses []miss
	for _, f := range []codec.Format{codec.Raw, codec.JSON} {
		if r := m(string(f)+": indexing") / m(string(f)+": composed limit"); r < 0.8 {
			misses = append(misses, miss{fmt.Sprintf("Missed: %s indexing is %.2f× the composed limit (target 0.8×)", f, r), profiles[string(f)]})
		}
	}
	if v := m("json: indexing input"); v < 50 {
		misses = append(misses, miss{fmt.Sprintf("Missed: json indexing reads %.1f MB/s per core (target 50)", v), profiles["json"]})
	}
	if r := m("json: indexing") / m("copying pipeline"); r < 1 {
		misses = append(misses, miss{fmt.Sprintf("Missed: json indexing is %.2f× the copying pipeline (target 1×)", r), profiles["json"]},
			miss{"For comparison, the copying pipeline", profiles["copying"]})
	}
	for _, f := range []codec.Format{codec.Avro, codec.Protobuf} {
		if r := m(string(f)+": indexing") / m("json: indexing"); r < 1 {
			misses = append(misses, miss{fmt.Sprintf("Missed: %s indexing is %.2f× json's records/s per core (target 1×)", f, r), profiles[string(f)]})
		}
	}
	summarized := map[string]bool{}
	for _, ms := range misses {
		if summarized[ms.prof] {
			h.Note("%s. CPU profile: the same as above.", ms.what)
			continue
		}
		summarized[ms.prof] = true
		sum, err := idxProfileSummary(ctx, ms.prof)
		if err != nil {
			h.Logf("profile summary: %v", err)
			sum = "(no summary: " + err.Error() + ")"
		}
		h.Note("%s. CPU profile of run 1: %s", ms.what, sum)
	}
	return nil
}

// idxDeclare declares the scenario's figures.
func idxDeclare(h *H) {
	const rps, mbps = "records/s per core", "MB/s per core"
	// Every rate is per CPU second of the whole bench process (getrusage
	// user + system) in the timed window; the figure notes say so.
	const cpu = "; ÷ process CPU-s"
	bare := "pqarrow, decoded rows, pinned settings" + cpu
	for _, f := range idxFormats {
		s := string(f)
		h.Figure(Figure{Name: s + ": bare Parquet encode", Unit: rps, Note: bare})
		enc := "datafile.Build, records in memory"
		if f.Registry() {
			enc = "schemas.Store.Spec + datafile.Build, records in memory"
		}
		h.Figure(Figure{Name: s + ": Mink encoder alone", Unit: rps, Ref: s + ": bare Parquet encode", Note: enc + cpu})
		h.Figure(Figure{Name: s + ": bare consume", Unit: rps, Note: "one franz-go consumer of the topic, read_committed, records discarded" + cpu + " (kfake in it)"})
		h.Figure(Figure{Name: s + ": composed limit", Unit: rps, Note: "1 / (1/bare consume + 1/bare encode), each run's"})
		ix := Figure{Name: s + ": indexing", Unit: rps, Ref: s + ": bare Parquet encode", Note: "kfake → indexers → Postgres" + cpu + " (kfake in it)"}
		in := Figure{Name: s + ": indexing input", Unit: mbps, Note: "value bytes" + cpu}
		composed := Figure{Name: s + ": indexing against the composed limit", Unit: rps, Ref: s + ": composed limit", Note: "the indexing figure above"}
		switch f {
		case codec.Raw:
			composed.MinRatio = 0.8
		case codec.JSON:
			composed.MinRatio = 0.8
			ix.Ref, ix.MinRatio = "copying pipeline", 1
			in.Min = 50
		case codec.Avro, codec.Protobuf:
			ix.Ref, ix.MinRatio = "json: indexing", 1
			in.Note = "value bytes (wire header + " + s + " payload)" + cpu
		}
		h.Figure(ix)
		h.Figure(composed)
		h.Figure(in)
		if f.Registry() {
			h.Figure(Figure{Name: s + ": indexing, JSON-equivalent input", Unit: mbps, Ref: "json: indexing input", MinRatio: 1,
				Note: "records/s × mean JSON value size of the same records" + cpu})
		}
	}
	h.Figure(Figure{Name: "copying pipeline", Unit: rps, Note: "kfake → franz-go → iceberg-go, json rows" + cpu + " (kfake in it)"})
	h.Figure(Figure{Name: "copying pipeline input", Unit: mbps, Note: "value bytes" + cpu})
	h.Figure(Figure{Name: "copying pipeline: data at rest", Unit: "MB", Note: "Parquet data files written"})
	h.Figure(Figure{Name: "copying pipeline: metadata at rest", Unit: "MB", Note: "metadata JSON, manifests"})
	h.Figure(Figure{Name: "Mink: data at rest", Unit: "MB", Note: "json table; no data file is kept"})
	h.Figure(Figure{Name: "Mink: metadata in Postgres", Unit: "MB", Note: "json table: ranges + data_files rows"})
}

// idxChunks turns the values into the Kafka records topic holds (value i
// at partition i mod idxPartitions, offsets from 0) and groups each
// partition's records into the ranges the indexer cuts: a range ends once
// its values reach idxRangeSize bytes.
func idxChunks(topic string, values [][]byte) [][]*kgo.Record {
	recs := make([]kgo.Record, len(values))
	ts := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var chunks [][]*kgo.Record
	for p := range idxPartitions {
		var cur []*kgo.Record
		var size int
		for i := p; i < len(values); i += idxPartitions {
			r := &recs[i]
			*r = kgo.Record{Topic: topic, Partition: int32(p), Offset: int64(i / idxPartitions), Timestamp: ts, Value: values[i]}
			cur = append(cur, r)
			if size += len(values[i]); size >= idxRangeSize {
				chunks, cur, size = append(chunks, cur), nil, 0
			}
		}
		if len(cur) > 0 {
			chunks = append(chunks, cur)
		}
	}
	return chunks
}

// idxDecoded reads Parquet files back into Arrow tables: the decoded rows
// the bare encode writes.
func idxDecoded(ctx context.Context, files [][]byte) ([]arrow.Table, error) {
	out := make([]arrow.Table, 0, len(files))
	for _, b := range files {
		t, err := pqarrow.ReadTable(ctx, bytes.NewReader(b), nil, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
		if err != nil {
			for _, t := range out {
				t.Release()
			}
			return nil, fmt.Errorf("read back: %w", err)
		}
		out = append(out, t)
	}
	return out, nil
}

// idxMaxRowGroupLen is datafile's row group length (rows), used for
// WriteTable's chunking.
const idxMaxRowGroupLen = 1 << 20

// idxBareEncode writes each table as one Parquet file in memory with the
// encoder's settings: no Kafka, no decoding, no statistics, no checksum.
func idxBareEncode(tabs []arrow.Table) error {
	return idxParallel(len(tabs), func(i int) error {
		_, err := idxEncode(tabs[i])
		return err
	})
}

// idxEncode writes t as one Parquet file with the encoder's settings and
// returns its bytes.
func idxEncode(t arrow.Table) ([]byte, error) {
	mem := memory.NewGoAllocator()
	props, err := datafile.WriterProperties(mem, t.Schema())
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(t.Schema(), &buf, props, datafile.ArrowWriterProperties(mem))
	if err != nil {
		return nil, err
	}
	if err := w.WriteTable(t, idxMaxRowGroupLen); err != nil {
		_ = w.Close()
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// idxParallel calls fn(0) … fn(n-1) on GOMAXPROCS goroutines (each range
// is encoded on its own, as the indexers of several partitions do) and
// returns the first error.
func idxParallel(n int, fn func(i int) error) error {
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i := range n {
		g.Go(func() error { return fn(i) })
	}
	return g.Wait()
}

// idxMink creates a table for def over the topic, runs one indexer per
// partition lease until every partition is indexed to its end, and returns
// the timed window and what the table's ranges left in Postgres. A CPU profile of the window is written to prof when set.
func idxMink(ctx context.Context, env *idxEnv, def tables.Definition, prof string) (idxWindow, idxMeta, error) {
	starts := make([]tables.PartitionStart, idxPartitions)
	for p := range starts {
		starts[p] = tables.PartitionStart{Partition: int32(p)}
	}
	tbl, err := tables.Create(ctx, env.pool, "mink", def, starts)
	if err != nil {
		return idxWindow{}, idxMeta{}, err
	}
	leases := make([]cluster.Lease, idxPartitions)
	for p := range leases {
		// Take the lease as the cluster loop does.
		if leases[p], err = testkit.TakeLease(ctx, env.pool, tables.PartitionScope(tbl.ID, int32(p)), "bench", time.Hour); err != nil {
			return idxWindow{}, idxMeta{}, err
		}
	}
	ix := indexer.New(env.pool, env.kc, indexer.Config{FlushInterval: idxFlushInterval, RangeSize: idxRangeSize, Logger: env.logger,
		Schemas: env.store})
	rctx, cancel := context.WithTimeout(ctx, idxTimeout)
	defer cancel()
	done := make(chan error, len(leases))
	stop, err := startCPUProfile(prof)
	if err != nil {
		return idxWindow{}, idxMeta{}, err
	}
	w, err := idxMeasure(func() error {
		for _, l := range leases {
			go func() { done <- ix.Run(rctx, l) }()
		}
		return idxWaitIndexed(rctx, env, tbl.ID, done)
	})
	stop()
	cancel()
	for range leases {
		if e := <-done; e != nil && err == nil {
			err = fmt.Errorf("indexer: %w", e)
		}
	}
	if err != nil {
		return w, idxMeta{}, err
	}
	dlq, err := tables.DLQ(ctx, env.pool, tbl.ID)
	if err != nil {
		return w, idxMeta{}, err
	}
	var meta idxMeta
	var dead int64
	err = env.pool.QueryRow(ctx, `
		SELECT (SELECT coalesce(sum(pg_column_size(r.*)), 0) FROM ranges r WHERE r.table_id = $1)
		     + (SELECT coalesce(sum(pg_column_size(d.*)), 0) FROM data_files d WHERE d.table_id = ANY($2)),
		       (SELECT count(*) FROM ranges r WHERE r.table_id = $1),
		       (SELECT count(*) FROM data_files d WHERE d.table_id = $3)`,
		tbl.ID, []int64{tbl.ID, dlq.ID}, dlq.ID).Scan(&meta.bytes, &meta.ranges, &dead)
	if err != nil {
		return w, meta, err
	}
	if dead > 0 {
		return w, meta, fmt.Errorf("%s: %d dead-letter files", def.Name, dead)
	}
	return w, meta, nil
}

// idxMeta is what indexing a table left in Postgres.
type idxMeta struct {
	// bytes is the size of the table's ranges and data_files rows
	// (pg_column_size), dead-letter table included.
	bytes int64
	// ranges counts the ranges indexed.
	ranges int64
}

// idxWaitIndexed waits until every partition of table id is indexed to
// its end, or an indexer stops.
func idxWaitIndexed(ctx context.Context, env *idxEnv, id int64, done <-chan error) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			return fmt.Errorf("indexer stopped early: %v", err)
		case <-ctx.Done():
			return fmt.Errorf("indexing: %w", ctx.Err())
		case <-tick.C:
		}
		rows, err := env.pool.Query(ctx, `SELECT partition, max(end_offset) FROM ranges WHERE table_id = $1 GROUP BY partition`, id)
		if err != nil {
			return err
		}
		indexed := 0
		for rows.Next() {
			var p int32
			var end int64
			if err := rows.Scan(&p, &end); err != nil {
				rows.Close()
				return err
			}
			if int(p) < len(env.ends) && end >= env.ends[p] {
				indexed++
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if indexed == len(env.ends) {
			return nil
		}
	}
}

func idxMedianDur(ds []time.Duration) time.Duration {
	xs := make([]float64, len(ds))
	for i, d := range ds {
		xs[i] = float64(d)
	}
	return time.Duration(median(xs))
}

func idxMean(total, n int64) float64 { return float64(total) / float64(n) }

// idxRegistryDefinition fills def.Schema with the columns of the latest
// schema of subject <topic>-value, as the admin API declares a table of a
// registry format (admin/declare.go): Latest, codec.ConvertWriter, the
// registry schema stored by id, codec.Columns, schemas.Initial.
func idxRegistryDefinition(ctx context.Context, store *schemas.Store, def *tables.Definition) error {
	f := codec.Format(def.ValueFormat)
	ws, err := store.Source().Latest(ctx, def.Topic+"-value")
	if err != nil {
		return err
	}
	t, err := codec.ConvertWriter(f, ws, nil)
	if err != nil {
		return fmt.Errorf("%s: schema id %d: %w", f, ws.ID, err)
	}
	if err := store.Put(ctx, ws); err != nil {
		return err
	}
	sc, _, err := schemas.Initial(codec.Raw, f, codec.Columns(t, false))
	if err != nil {
		return err
	}
	def.Schema, err = json.Marshal(iceberg.NewSchema(0, schemas.Columns(sc)...))
	return err
}

// idxCheckRows checks that the avro and protobuf tables decode the flight
// records to the rows json decodes them to: the decoded rows of every
// range (the encoder's files read back, in partition and offset order)
// give the same digest of their value columns (every column but _kafka:
// names, Arrow types, values and nulls) as json's. The ranges differ in
// size between formats; the sequence of rows does not. Raw and string
// tables have other columns and are not checked.
func idxCheckRows(h *H, f codec.Format, decoded []arrow.Table, digests map[codec.Format]string) error {
	if f != codec.JSON && !f.Registry() {
		return nil
	}
	d, rows, err := idxDigest(decoded)
	if err != nil {
		return fmt.Errorf("%s: %w", f, err)
	}
	digests[f] = d
	if f == codec.JSON {
		return nil
	}
	want, ok := digests[codec.JSON]
	if !ok {
		return fmt.Errorf("%s: no json rows to compare with", f)
	}
	if d != want {
		return fmt.Errorf("%s: the decoded rows differ from json's (digest %s, json %s)", f, d, want)
	}
	h.Note("%s: the %d decoded rows equal json's (value columns: names, types, values and nulls; SHA-256 %s).", f, rows, d[:16])
	return nil
}

// idxDigest returns a SHA-256 of the value columns (all but _kafka) of
// tabs, one after the other, and their row count. Each column is hashed on
// its own over all of tabs, so the digest does not depend on where the
// rows are cut into tables.
func idxDigest(tabs []arrow.Table) (string, int64, error) {
	type column struct {
		typ  string
		hash hash.Hash
	}
	cols := map[string]*column{}
	var names []string
	var rows int64
	var num [9]byte
	num[0] = 1 // not null
	for _, t := range tabs {
		rows += t.NumRows()
		for c := range int(t.NumCols()) {
			col := t.Column(c)
			if col.Name() == codec.KafkaColumn {
				continue
			}
			cd := cols[col.Name()]
			if cd == nil {
				cd = &column{typ: col.DataType().String(), hash: sha256.New()}
				cols[col.Name()] = cd
				names = append(names, col.Name())
			}
			if typ := col.DataType().String(); typ != cd.typ {
				return "", 0, fmt.Errorf("column %s: Arrow type %s, then %s", col.Name(), cd.typ, typ)
			}
			for _, a := range col.Data().Chunks() {
				for i := range a.Len() {
					if a.IsNull(i) {
						cd.hash.Write([]byte{0})
						continue
					}
					switch a := a.(type) {
					case *array.Int64:
						binary.LittleEndian.PutUint64(num[1:], uint64(a.Value(i)))
					case *array.Timestamp:
						binary.LittleEndian.PutUint64(num[1:], uint64(a.Value(i)))
					case *array.String:
						binary.LittleEndian.PutUint64(num[1:], uint64(len(a.Value(i))))
						cd.hash.Write(num[:])
						cd.hash.Write([]byte(a.Value(i)))
						continue
					default:
						return "", 0, fmt.Errorf("column %s: unexpected Arrow type %s", col.Name(), a.DataType())
					}
					cd.hash.Write(num[:])
				}
			}
		}
	}
	all := sha256.New()
	for _, n := range names {
		fmt.Fprintf(all, "%s %s %x\n", n, cols[n].typ, cols[n].hash.Sum(nil))
	}
	return hex.EncodeToString(all.Sum(nil)), rows, nil
}

// How a bare-encoded file compares with the encoder's.
const (
	idxFileSame       = iota // byte-identical
	idxFileStatsOrder        // identical but for the order of encoding_stats entries
	idxFileDiffers
)

// idxSameFile compares the Parquet files a (the bare encode's) and b (the
// encoder's). The encoder puts each column chunk's encoding_stats in one
// order (datafile's canonicalFooter), where arrow-go follows Go map order
// when a chunk's pages use two encodings: files that differ only there
// have the same pages and the same footer once the entries are sorted.
func idxSameFile(a, b []byte) (int, error) {
	if bytes.Equal(a, b) {
		return idxFileSame, nil
	}
	if len(a) != len(b) || len(a) < 12 {
		return idxFileDiffers, nil
	}
	footer := 8 + int(binary.LittleEndian.Uint32(a[len(a)-8:]))
	if footer > len(a) || !bytes.Equal(a[:len(a)-footer], b[:len(b)-footer]) {
		return idxFileDiffers, nil
	}
	var metas [2]*metadata.FileMetaData
	for i, f := range [2][]byte{a, b} {
		r, err := file.NewParquetReader(bytes.NewReader(f))
		if err != nil {
			return 0, err
		}
		metas[i] = r.MetaData()
		if err := r.Close(); err != nil {
			return 0, err
		}
		for _, rg := range metas[i].RowGroups {
			for _, cc := range rg.Columns {
				if cc.MetaData == nil {
					continue
				}
				es := cc.MetaData.EncodingStats
				sort.Slice(es, func(x, y int) bool {
					if es[x].PageType != es[y].PageType {
						return es[x].PageType < es[y].PageType
					}
					return es[x].Encoding < es[y].Encoding
				})
			}
		}
	}
	// The thrift structures of the footers (the rest of FileMetaData is
	// derived from them or reader state).
	if reflect.DeepEqual(metas[0].FileMetaData, metas[1].FileMetaData) {
		return idxFileStatsOrder, nil
	}
	return idxFileDiffers, nil
}
