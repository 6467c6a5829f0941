package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/iceberg-go/catalog/rest"
	_ "github.com/apache/iceberg-go/io/gocloud/s3" // the s3:// file IO the catalog hands out
	"github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/devenv"
	"github.com/minkhq/mink/icebergmeta"
	"github.com/minkhq/mink/tables"
)

// Freshness scenario settings.
const (
	// frNodes is how many Mink nodes share the table (in process).
	frNodes = 3
	// frPartitions is the topic's partition count.
	frPartitions = 6
	// frFlush and frCommit are the indexer's flush interval and the
	// writer's commit interval: the node defaults (indexer.Config,
	// writer.Config).
	frFlush  = 2 * time.Second
	frCommit = 2 * time.Second
	// frRate is the background produce rate in bytes (of values) per
	// second. The indexed data trails Kafka by about frFlush/2 +
	// frCommit/2 (≈ 2 s, about 1 MiB); a load commits only what arrived
	// since the table's last commit (often the previous sample's load).
	frRate = 360 << 10
	// frSamples is how many produce-then-load samples one run takes
	// (frQuickSamples with -quick).
	frSamples      = 100
	frQuickSamples = 30
	// frWarmup is how long the producer runs before the first sample, so
	// that indexing and commits are in their steady state.
	frWarmup = 6 * time.Second
	// frTargetP99 is the target freshness p99 in milliseconds.
	frTargetP99 = 250
	// frCopyCommit is the copying pipeline's usual commit interval.
	frCopyCommit = 10 * time.Second
	// frMissWait bounds the wait for a record that a load missed.
	frMissWait = 30 * time.Second
)

func init() {
	register(Scenario{
		Name:  "freshness",
		Title: "Freshness: producer acknowledgement to table load",
		About: fmt.Sprintf(`A json table of flight records on a %d-partition topic, %d nodes in
process (real PostgreSQL, kfake over the wire), indexer flush and writer
commit every %v and %v (the node defaults). A background producer writes
%d KiB/s of flight records (JSON values, ~90 B each); the indexed data
trails Kafka by about 1 MiB, and each load builds from Kafka and commits
the records that arrived since the table's last commit (its tail, often
since the previous sample's load; the measured size is a figure). Each sample produces one record synchronously, takes the time of
its acknowledgement, then loads the table through iceberg-go's REST catalog
(round-robin over the nodes) and plans the scan; the record counts as
present when a planned data file's offset range covers its offset.
Freshness is the time from the acknowledgement to the load that contains
it (one load when zero lag holds); p50 and p99 are over the run's samples.
The copying pipeline's figures are computed, not measured: a record waits
for the next commit of a %v commit interval.`,
			frPartitions, frNodes, frFlush, frCommit, frRate>>10, frCopyCommit),
		Run: runFreshness,
	})
}

// frSample is one produce-then-load measurement.
type frSample struct {
	fresh    time.Duration // acknowledgement → answer of the load containing the record
	planned  time.Duration // acknowledgement → that load's scan planned
	missed   bool          // the first load after the acknowledgement did not contain it
	tailRecs int64         // records in the tail the load built (0: committed snapshot)
	tailSize int64         // bytes of its tail data files (Parquet)
}

// flightsEnv starts nodes nodes on a fresh schema (the freshness
// scenario's flush and commit intervals, quiet logs) with table bench.name
// (json flight records) over a topic name of partitions partitions. The
// caller stops the env.
func flightsEnv(ctx context.Context, h *H, nodes, partitions int, name string) (*devenv.Env, error) {
	pg, err := h.Postgres(ctx)
	if err != nil {
		return nil, err
	}
	env, err := devenv.StartEnv(ctx, devenv.DevConfig{Nodes: nodes, PostgresURL: pg, EphemeralPorts: true,
		FlushInterval: frFlush, CommitInterval: frCommit, Logger: frQuietLogger()})
	if err != nil {
		return nil, err
	}
	if err = env.Kafka.CreateTopic(name, int32(partitions), nil); err == nil {
		err = devenv.CreateTable(ctx, env.Nodes[0].URL(), map[string]any{"namespace": "bench", "name": name,
			"topic": name, "value_format": "json", "schema": json.RawMessage(FlightsSchema)})
	}
	if err != nil {
		env.Stop()
		return nil, err
	}
	return env, nil
}

func runFreshness(ctx context.Context, h *H) error {
	values, err := flightValues(h, 100_000)
	if err != nil {
		return err
	}
	samples := ifQuick(h, frSamples, frQuickSamples)
	var valueBytes int
	for _, v := range values {
		valueBytes += len(v)
	}
	meanValue := float64(valueBytes) / float64(len(values))

	const topic, ns, name = "flights", "bench", "flights"
	env, err := flightsEnv(ctx, h, frNodes, frPartitions, name)
	if err != nil {
		return err
	}
	defer env.Stop()
	cats := make([]*rest.Catalog, len(env.Nodes))
	for i, n := range env.Nodes {
		if cats[i], err = rest.NewCatalog(ctx, "mink", n.URL()); err != nil {
			return err
		}
	}

	// Background load: frRate records/s, round-robin over the partitions.
	prod := frStartProducing(ctx, env.Brokers, topic, values, frRate/meanValue)
	defer prod.stop()

	probe, err := kgo.NewClient(kgo.SeedBrokers(env.Brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return err
	}
	defer probe.Close()

	h.Figure(Figure{Name: "freshness p50", Unit: "ms", Ref: "copying pipeline p50",
		Note: "ack → iceberg-go LoadTable answered, with the record in it"})
	h.Figure(Figure{Name: "freshness p99", Unit: "ms", Ref: "copying pipeline p99", Max: frTargetP99,
		Note: "target"})
	h.Figure(Figure{Name: "records missing", Unit: "records",
		Note: "target 0: acknowledged records absent from the first load after the ack"})
	h.Figure(Figure{Name: "acknowledged records in the next load", Unit: "%", Min: 100})
	h.Figure(Figure{Name: "freshness incl. scan planning p99", Unit: "ms",
		Note: "ack → PlanFiles done (manifest list and manifests read over the S3 API)"})
	h.Figure(Figure{Name: "tail at load p50", Unit: "KiB",
		Note: fmt.Sprintf("records past the committed snapshot × %.0f B mean JSON value", meanValue)})
	h.Figure(Figure{Name: "tail data files at load p50", Unit: "KiB", Note: "Parquet bytes of the tail files the load committed"})
	h.Figure(Figure{Name: "copying pipeline p50", Unit: "ms",
		Note: fmt.Sprintf("computed: uniform arrivals, wait for the next %v commit; commit time excluded (a lower bound)", frCopyCommit)})
	h.Figure(Figure{Name: "copying pipeline p99", Unit: "ms", Note: "computed, as above"})

	h.Logf("warming up for %v (producing %.0f records/s)", frWarmup, frRate/meanValue)
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(frWarmup):
	}

	profPath := ""
	var lastP99 float64
	for run := 0; run < h.Runs; run++ {
		// Profile the last run: if the target is missed, its summary says
		// where the time went.
		stop := func() {}
		if run == h.Runs-1 {
			dir, err := h.TempDir()
			if err != nil {
				return err
			}
			profPath = filepath.Join(dir, "freshness.pprof")
			if stop, err = startCPUProfile(profPath); err != nil {
				h.Logf("cpu profile: %v", err)
				stop, profPath = func() {}, ""
			}
		}
		ss, err := frRun(ctx, h, probe, cats, topic, table.Identifier{ns, name}, samples)
		stop()
		if err != nil {
			return err
		}
		lastP99 = frRecord(h, ss, meanValue)
		if err := prod.err(); err != nil {
			return err
		}
	}
	h.Note("Copying pipeline (computed): a record acknowledged at a uniformly random time waits for the next commit of a %v interval, so p50 ≥ %.0f ms and p99 ≥ %.0f ms before the commit itself (writing Parquet, the catalog commit) is counted; Mink's load answers with the record with no commit in between.",
		frCopyCommit, 0.5*float64(frCopyCommit.Milliseconds()), 0.99*float64(frCopyCommit.Milliseconds()))
	if lastP99 > frTargetP99 && profPath != "" {
		h.Note("p99 target missed; CPU profile of the last run (whole process: %d nodes, producer and client; CPU ms per sample): %s",
			frNodes, frProfileSummary(profPath, samples, "sample", []frBucket{
				{"tail builds and commits", `tail\.\(\*Loader\)\.extend$`},
				{"  of which datafile.Build", `datafile\.Build$`},
				{"  of which Kafka ReadRange", `kafka\.\(\*Client\)\.ReadRange$`},
				{"  of which icebergmeta.Append", `icebergmeta\.Append$`},
				{"catalog load handler", `catalog\.\(\*Handler\)\.loadTable$`},
				{"iceberg-go LoadTable (client)", `rest\.\(\*Catalog\)\.LoadTable$`},
				{"iceberg-go PlanFiles (client)", `table\.\(\*Scan\)\.PlanFiles$`},
				{"iceberg-go S3 file IO setup (AWS config, CA bundle; once per loaded table)", `io\.LoadFS$`},
				{"indexers", `indexer\.\(\*Indexer\)\.Run$`},
				{"writers", `writer\.\(\*Writer\)\.Run$`},
				{"background producer", `kgo\.\(\*Client\)\.Produce$|frProduceAtRate`},
				{"kfake broker", `kfake\.`},
				{"GC", `runtime\.gcBgMarkWorker$`},
			}))
	}
	return nil
}

// frRecord adds one run's figures and returns its p99 in milliseconds.
func frRecord(h *H, ss []frSample, meanValue float64) float64 {
	var fresh, planned, tail, tailFiles []float64
	missing := 0
	for _, s := range ss {
		fresh = append(fresh, frMS(s.fresh))
		planned = append(planned, frMS(s.planned))
		tail = append(tail, float64(s.tailRecs)*meanValue/1024)
		tailFiles = append(tailFiles, float64(s.tailSize)/1024)
		if s.missed {
			missing++
		}
	}
	p99 := frPercentile(fresh, 99)
	h.Add("freshness p50", frPercentile(fresh, 50))
	h.Add("freshness p99", p99)
	h.Add("records missing", float64(missing))
	h.Add("acknowledged records in the next load", 100*float64(len(ss)-missing)/float64(len(ss)))
	h.Add("freshness incl. scan planning p99", frPercentile(planned, 99))
	h.Add("tail at load p50", frPercentile(tail, 50))
	h.Add("tail data files at load p50", frPercentile(tailFiles, 50))
	h.Add("copying pipeline p50", 0.5*float64(frCopyCommit.Milliseconds()))
	h.Add("copying pipeline p99", 0.99*float64(frCopyCommit.Milliseconds()))
	return p99
}

// frRun takes n samples: produce one record, then load until a load holds it.
func frRun(ctx context.Context, h *H, probe *kgo.Client, cats []*rest.Catalog, topic string, id table.Identifier, n int) ([]frSample, error) {
	value := []byte(`{"date":"2001-01-01T00:00:00Z","delay":0,"distance":0,"origin":"PRB","destination":"PRB"}`)
	out := make([]frSample, 0, n)
	for i := 0; i < n; i++ {
		p := int32(i % frPartitions)
		res := probe.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: p, Value: value})
		acked := time.Now()
		if err := res.FirstErr(); err != nil {
			return nil, fmt.Errorf("produce: %w", err)
		}
		off := res[0].Record.Offset
		var s frSample
		for attempt := 0; ; attempt++ {
			tbl, err := cats[(i+attempt)%len(cats)].LoadTable(ctx, id)
			if err != nil {
				return nil, fmt.Errorf("load: %w", err)
			}
			loaded := time.Now()
			tasks, err := tbl.Scan().PlanFiles(ctx)
			if err != nil {
				return nil, fmt.Errorf("plan: %w", err)
			}
			s.planned = time.Since(acked)
			found := false
			for _, t := range tasks {
				ref, ok := tables.ParseDataFileKey(tables.Key(t.File.FilePath()))
				if ok && ref.Partition == p && ref.Start <= off && off < ref.End {
					found = true
					break
				}
			}
			if found {
				s.fresh = loaded.Sub(acked)
				s.tailRecs, s.tailSize = frTailOf(tbl)
				break
			}
			s.missed = true
			if time.Since(acked) > frMissWait {
				return nil, fmt.Errorf("partition %d offset %d: in no load for %v", p, off, frMissWait)
			}
		}
		out = append(out, s)
	}
	h.Logf("%d samples", len(out))
	return out, nil
}

// frTailOf returns the records and Parquet bytes of the tail a loaded
// table carries: what its current snapshot added when a table load
// committed it (summary mink.committed-by), else zeros.
func frTailOf(tbl *table.Table) (records, size int64) {
	snap := tbl.CurrentSnapshot()
	if snap == nil || snap.Summary == nil || snap.Summary.Properties[icebergmeta.SummaryCommittedBy] != icebergmeta.CommittedByLoad {
		return 0, 0
	}
	records, _ = strconv.ParseInt(snap.Summary.Properties["added-records"], 10, 64)
	size, _ = strconv.ParseInt(snap.Summary.Properties["added-files-size"], 10, 64)
	return records, size
}

// frProduceAtRate produces values (cycling) at rate records/s, round-robin
// over the partitions, in a batch every 10 ms, until ctx ends.
// frProducer produces in the background (frProduceAtRate) until stopped.
type frProducer struct {
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	failure atomic.Value // error
}

// frStartProducing starts producing values to topic at rate records per
// second.
func frStartProducing(ctx context.Context, brokers []string, topic string, values [][]byte, rate float64) *frProducer {
	ctx, cancel := context.WithCancel(ctx)
	p := &frProducer{cancel: cancel}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		if err := frProduceAtRate(ctx, brokers, topic, values, rate); err != nil && ctx.Err() == nil {
			p.failure.Store(err)
		}
	}()
	return p
}

// stop stops producing and waits for the producer to return.
func (p *frProducer) stop() {
	p.cancel()
	p.wg.Wait()
}

// err is the error that ended producing before stop, or nil.
func (p *frProducer) err() error {
	if e, _ := p.failure.Load().(error); e != nil {
		return fmt.Errorf("background producer: %w", e)
	}
	return nil
}

func frProduceAtRate(ctx context.Context, brokers []string, topic string, values [][]byte, rate float64) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(2*time.Millisecond))
	if err != nil {
		return err
	}
	defer cl.Close()
	var failed atomic.Value
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	start := time.Now()
	sent := 0
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		if e, _ := failed.Load().(error); e != nil {
			return e
		}
		due := int(time.Since(start).Seconds() * rate)
		for ; sent < due; sent++ {
			cl.Produce(ctx, &kgo.Record{Topic: topic, Partition: int32(sent % frPartitions), Value: values[sent%len(values)]},
				func(_ *kgo.Record, err error) {
					if err != nil && ctx.Err() == nil {
						failed.Store(err)
					}
				})
		}
	}
}

// frPercentile returns the p-th percentile (nearest rank) of xs.
func frPercentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

func frMS(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// frQuietLogger logs warnings and errors only: the nodes' info logs would
// drown the harness's progress lines.
func frQuietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// frBucket names a part of a CPU profile: the first function matching re
// (by `go tool pprof -top -cum`) gives its cumulative share.
type frBucket struct {
	label string
	re    string
}

var frTopLine = regexp.MustCompile(`^\s*([\d.]+\pL*)\s+([\d.]+)%\s+([\d.]+)%\s+([\d.]+\pL*)\s+([\d.]+)%\s+(.+?)(?: \(inline\))?\s*$`)

// frProfileSummary summarizes a CPU profile: its CPU use (samples over
// wall time), the CPU time of each bucket per operation (ops operations
// were profiled, e.g. table loads) and its share of all samples, and the
// functions with the most flat time. It runs `go tool pprof`; on failure
// the summary says so.
func frProfileSummary(path string, ops int, op string, buckets []frBucket) string {
	run := func(args ...string) (string, error) {
		var out, errb bytes.Buffer
		cmd := exec.Command("go", append([]string{"tool", "pprof"}, args...)...)
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("go tool pprof: %v: %s", err, strings.TrimSpace(errb.String()))
		}
		return out.String(), nil
	}
	cum, err := run("-top", "-cum", "-nodecount=400", path)
	if err != nil {
		return err.Error()
	}
	var parts []string
	for _, l := range strings.Split(cum, "\n") {
		if strings.HasPrefix(l, "Duration:") {
			// "Duration: 6.08s, Total samples = 4.39s (72.19%)"
			parts = append(parts, "wall "+strings.TrimSpace(strings.TrimPrefix(l, "Duration:"))+" of one core")
		}
	}
	for _, b := range buckets {
		re := regexp.MustCompile(b.re)
		for _, l := range strings.Split(cum, "\n") {
			m := frTopLine.FindStringSubmatch(l)
			if m != nil && re.MatchString(m[6]) {
				per := ""
				if d, err := time.ParseDuration(m[4]); err == nil && ops > 0 {
					per = fmt.Sprintf("%.1f ms/%s, ", frMS(d)/float64(ops), op)
				}
				parts = append(parts, fmt.Sprintf("%s %s%s%%", strings.TrimSpace(b.label), per, m[5]))
				break
			}
		}
	}
	flat, err := run("-top", "-nodecount=6", path)
	if err == nil {
		var top []string
		for _, l := range strings.Split(flat, "\n") {
			if m := frTopLine.FindStringSubmatch(l); m != nil && m[2] != "0" {
				top = append(top, fmt.Sprintf("%s %s%%", frShortFunc(m[6]), m[2]))
			}
		}
		if len(top) > 0 {
			parts = append(parts, "top flat: "+strings.Join(top, ", "))
		}
	}
	return strings.Join(parts, "; ")
}

// frShortFunc drops the module path of a function name.
func frShortFunc(f string) string {
	f = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(f), "(inline)"))
	if i := strings.LastIndexByte(f, '/'); i >= 0 {
		f = f[i+1:]
	}
	return f
}
