package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/hadoop"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/minkhq/mink/auth"
	"github.com/minkhq/mink/codec"
	"github.com/minkhq/mink/devenv"
	"github.com/minkhq/mink/node"
	"github.com/minkhq/mink/tables"
)

// Scan scenario settings.
const (
	// scPartitions is the topic's partition count (as the indexing scenario).
	scPartitions = 4
	// scQuickRecords is the number of flight records with -quick.
	scQuickRecords = 300_000
)

func init() {
	register(Scenario{
		Name:  "scan",
		Title: "Whole-table scan: cold and warm caches against local Parquet",
		About: `The flight records (flights-3m.parquet) are produced as JSON values into a
topic of 4 partitions on an in-process kfake broker reached over TCP, and
indexed by one Mink node (real PostgreSQL; json table of the flights
schema, default range size 16 MiB) until every partition is committed, and
until the writer's assembly (docs/design.md §4.6, default target file size)
has settled: the table's data files the same over 3 assembly passes. The
copying pipeline (the indexing scenario's) writes the same records to a
hadoop file:// warehouse on local disk. Each run then scans the whole table
with apache/iceberg-go, the way an engine reads (load the table from the
catalog, plan, table.Scan().ToArrowRecords, every column, iceberg-go's
default concurrency of GOMAXPROCS for every scan): Mink from cold caches
(the node restarted, which empties its cache directory, so every data file
is built from Kafka on its first read), then again from warm caches (the
files now cached), then the copying pipeline's table from its local
Parquet files (the page cache warm). Wall time from the catalog load to the
last record batch; the figures are records/s, the ratios Mink over local.`,
		Run: runScan,
	})
}

// scProfile, when set (MINK_BENCH_SCAN_PROFILE), is where CPU profiles of
// the last run's scans go (.cold, .warm, .local appended).
var scProfile = os.Getenv("MINK_BENCH_SCAN_PROFILE")

func runScan(ctx context.Context, h *H) error {
	values, err := flightValues(h, ifQuick(h, 0, scQuickRecords))
	if err != nil {
		return err
	}
	records := int64(len(values))
	pg, err := h.Postgres(ctx)
	if err != nil {
		return err
	}
	dir, err := h.TempDir()
	if err != nil {
		return err
	}
	const topic = "flights"
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(scPartitions, topic))
	if err != nil {
		return err
	}
	env := &svEnv{kafka: kc, cfg: node.Config{
		PostgresURL: pg, KafkaBrokers: kc.ListenAddrs(), Listen: "127.0.0.1:0", NodeID: "scan-1", Auth: auth.ModeNone,
		Warehouse: "mink", LeaseTTL: 10 * time.Second, CacheDir: filepath.Join(dir, "cache"), CacheSize: 4 << 30,
		CommitInterval: 500 * time.Millisecond, Logger: frQuietLogger(),
	}}
	defer env.stop()
	t0 := time.Now()
	if _, err := produce(ctx, kc.ListenAddrs(), topic, scPartitions, values); err != nil {
		return err
	}
	h.Logf("produced %d records in %v", records, time.Since(t0).Round(time.Millisecond))
	if env.node, err = node.Start(ctx, env.cfg); err != nil {
		return err
	}
	// Keep the port on restarts: the table's S3 endpoint is this URL.
	env.cfg.Listen = env.node.URL()[len("http://"):]
	env.cfg.Advertise = env.node.URL()
	def := map[string]any{"namespace": "bench", "name": "flights", "topic": topic,
		"value_format": string(codec.JSON), "schema": json.RawMessage(FlightsSchema)}
	if err := devenv.CreateTable(ctx, env.node.URL(), def); err != nil {
		return err
	}
	t0 = time.Now()
	if err := svWaitCommitted(ctx, env.node.URL(), "bench.flights", records/scPartitions); err != nil {
		return err
	}
	h.Logf("indexed and committed in %v", time.Since(t0).Round(time.Millisecond))
	committed := time.Now()
	firstCat, err := rest.NewCatalog(ctx, "mink", env.node.URL())
	if err != nil {
		return err
	}
	firstPaths, _, err := scFileList(ctx, firstCat, table.Identifier{"bench", "flights"})
	if err != nil {
		return err
	}

	// The copying pipeline's table of the same records, on local disk.
	schemaDef := tables.Definition{Namespace: "bench", Name: "copy", Topic: topic, ValueFormat: string(codec.JSON),
		KeyFormat: string(codec.Raw), Schema: json.RawMessage(FlightsSchema)}
	schema, _, err := tables.Schemas(&schemaDef)
	if err != nil {
		return err
	}
	wh := filepath.Join(dir, "warehouse")
	if _, err := runCopying(ctx, copyingConfig{Brokers: kc.ListenAddrs(), Topic: topic, Records: records,
		Schema: schema, Warehouse: wh, Table: "flights", CommitBytes: scPartitions * 16 << 20}); err != nil {
		return fmt.Errorf("copying pipeline: %w", err)
	}
	local := func(ctx context.Context) (int64, error) {
		cat, err := hadoop.NewCatalog("bench", wh, iceberg.Properties{})
		if err != nil {
			return 0, err
		}
		defer cat.Close()
		return scScan(ctx, cat, table.Identifier{"bench", "flights"})
	}
	mink := func(ctx context.Context) (int64, error) {
		cat, err := rest.NewCatalog(ctx, "mink", env.node.URL())
		if err != nil {
			return 0, err
		}
		return scScan(ctx, cat, table.Identifier{"bench", "flights"})
	}
	// Scan the table as a user has it: after the writer has assembled
	// its small files (docs/design.md §4.6).
	sizes, err := scWaitAssembled(ctx, env.node.URL(), 5*env.cfg.CommitInterval)
	if err != nil {
		return err
	}
	settled := time.Since(committed).Round(time.Second)
	h.Logf("assembly settled %v after the commit", settled)
	files := len(sizes)
	localSizes, err := scLocalSizes(ctx, wh)
	if err != nil {
		return err
	}
	h.Note("%d records. Mink's table as scanned, after assembly (target file size 8 MiB, the default; its data files unchanged over %d assembly passes, %s after the last record was committed): %s; "+
		"when the last record was committed: %d data files. The copying pipeline's (iceberg-go appends of 64 MiB batches of values, one file per partition per append, iceberg-go's default target file size of 512 MiB): %s.",
		records, scSettledPasses, settled, scSizesText(sizes), len(firstPaths), scSizesText(localSizes))

	h.Figure(Figure{Name: "local scan", Unit: "records/s",
		Note: "iceberg-go over the copying pipeline's hadoop file:// warehouse"})
	h.Figure(Figure{Name: "cold scan", Unit: "records/s", Ref: "local scan", MinRatio: 0.5,
		Note: "Mink, node restarted (empty cache): every data file built from Kafka on its first read; target: within 2× the local scan's time"})
	h.Figure(Figure{Name: "warm scan", Unit: "records/s", Ref: "local scan", MinRatio: 1 / 1.1,
		Note: "Mink, the same scan again (every file cached); target: within 1.1× the local scan's time"})
	h.Figure(Figure{Name: "cold scan time", Unit: "s"})
	h.Figure(Figure{Name: "warm scan time", Unit: "s"})
	h.Figure(Figure{Name: "local scan time", Unit: "s"})
	h.Figure(Figure{Name: "cold scan CPU", Unit: "CPU-s", Ref: "local scan CPU",
		Note: "process CPU time during the scan (node, kfake broker and reader are one process): the builds' Kafka fetch and encode"})
	h.Figure(Figure{Name: "warm scan CPU", Unit: "CPU-s", Ref: "local scan CPU"})
	h.Figure(Figure{Name: "local scan CPU", Unit: "CPU-s"})

	var cpu time.Duration // process CPU time of the last scan timed
	timed := func(scan func(context.Context) (int64, error), profile string) (time.Duration, error) {
		stop, err := startCPUProfile(profile)
		if err != nil {
			return 0, err
		}
		start, cpu0 := time.Now(), idxCPU()
		n, err := scan(ctx)
		d := time.Since(start)
		cpu = idxCPU() - cpu0
		stop()
		if err == nil && n != records {
			err = fmt.Errorf("scan read %d records of %d", n, records)
		}
		return d, err
	}
	var coldWall, coldCPU, localWall []float64
	for run := 0; run < h.Runs; run++ {
		if err := env.restart(ctx); err != nil {
			return err
		}
		prof := func(name string) string {
			if run < h.Runs-1 || scProfile == "" {
				return ""
			}
			return scProfile + "." + name
		}
		cold, err := timed(mink, prof("cold"))
		if err != nil {
			return fmt.Errorf("cold scan: %w", err)
		}
		h.Add("cold scan CPU", cpu.Seconds())
		coldWall, coldCPU = append(coldWall, cold.Seconds()), append(coldCPU, cpu.Seconds())
		gets0 := scDataGets(ctx, env.node.URL())
		warm, err := timed(mink, prof("warm"))
		if err != nil {
			return fmt.Errorf("warm scan: %w", err)
		}
		h.Add("warm scan CPU", cpu.Seconds())
		if run == 0 {
			h.Note("A warm scan sends %.0f data file GETs to the node (cache hits counted by mink_objects_cache_hits_total), %.1f per data file: "+
				"iceberg-go v0.7.0 opens a file with a GET of the whole object (gocloud's NewReader), reads none of its body and drops the connection, "+
				"then sends one ranged GET per read: the footer and each column chunk (12 leaf columns, one row group per file). "+
				"The local scan reads the same parts with pread.",
				scDataGets(ctx, env.node.URL())-gets0, (scDataGets(ctx, env.node.URL())-gets0)/float64(files))
		}
		loc, err := timed(local, prof("local"))
		if err != nil {
			return fmt.Errorf("local scan: %w", err)
		}
		h.Add("local scan CPU", cpu.Seconds())
		localWall = append(localWall, loc.Seconds())
		h.Add("local scan", float64(records)/loc.Seconds())
		h.Add("cold scan", float64(records)/cold.Seconds())
		h.Add("warm scan", float64(records)/warm.Seconds())
		h.Add("cold scan time", cold.Seconds())
		h.Add("warm scan time", warm.Seconds())
		h.Add("local scan time", loc.Seconds())
	}
	cores := float64(runtime.GOMAXPROCS(0))
	h.Note("The cold scan's CPU time, %.2f CPU-s (median; nearly all of it builds the data files: Kafka fetch and parse, JSON decode, Parquet encode, SHA-256), "+
		"takes at least %.2f s on the machine's %.0f cores even when spread over all of them (its wall time was %.2f s): %.1f× the local scan's time, "+
		"so no reading ahead of the scan can bring it within 2×; that needs the whole cold scan under about %.2f CPU-s.",
		median(coldCPU), median(coldCPU)/cores, cores, median(coldWall), median(coldCPU)/cores/median(localWall), 2*median(localWall)*cores)
	return nil
}

// scScan loads table id from cat and reads every record of its current
// snapshot with iceberg-go's default scan settings; it returns the rows read.
func scScan(ctx context.Context, cat catalog.Catalog, id table.Identifier) (int64, error) {
	tbl, err := cat.LoadTable(ctx, id)
	if err != nil {
		return 0, err
	}
	_, it, err := tbl.Scan().ToArrowRecords(ctx)
	if err != nil {
		return 0, err
	}
	var n int64
	for rec, err := range it {
		if err != nil {
			return n, err
		}
		n += rec.NumRows()
		rec.Release()
	}
	return n, nil
}

// scSettledPasses is how many assembly passes in a row must leave the data
// files of the table unchanged before the scan takes it as assembled.
const scSettledPasses = 3

// scWaitAssembled waits until the data files of bench.flights stay the same
// (by path) over scSettledPasses polls, one per assembly pass (every), and
// returns the sizes of the settled files.
func scWaitAssembled(ctx context.Context, nodeURL string, every time.Duration) ([]int64, error) {
	cat, err := rest.NewCatalog(ctx, "mink", nodeURL)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(3 * time.Minute)
	var last string
	same := 0
	for {
		paths, sz, err := scFileList(ctx, cat, table.Identifier{"bench", "flights"})
		if err != nil {
			return nil, err
		}
		if key := strings.Join(paths, "\n"); key == last {
			same++
		} else {
			last, same = key, 0
		}
		if same >= scSettledPasses {
			return sz, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("bench.flights: data files still changing after 3 minutes (%d now)", len(paths))
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(every):
		}
	}
}

// scLocalSizes returns the sizes of the data files of the copying
// pipeline's table in the hadoop warehouse wh.
func scLocalSizes(ctx context.Context, wh string) ([]int64, error) {
	cat, err := hadoop.NewCatalog("bench", wh, iceberg.Properties{})
	if err != nil {
		return nil, err
	}
	defer cat.Close()
	_, sizes, err := scFileList(ctx, cat, table.Identifier{"bench", "flights"})
	return sizes, err
}

// scFileList loads id from cat and returns the sorted paths of the data
// files of its current snapshot and their sizes, in bytes, ascending.
func scFileList(ctx context.Context, cat catalog.Catalog, id table.Identifier) ([]string, []int64, error) {
	tbl, err := cat.LoadTable(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return nil, nil, err
	}
	paths := make([]string, 0, len(tasks))
	sizes := make([]int64, 0, len(tasks))
	for _, t := range tasks {
		paths = append(paths, t.File.FilePath())
		sizes = append(sizes, t.File.FileSizeBytes())
	}
	slices.Sort(paths)
	slices.Sort(sizes)
	return paths, sizes, nil
}

// scSizesText describes data file sizes (ascending): count, total, and
// smallest, median and largest file.
func scSizesText(sizes []int64) string {
	if len(sizes) == 0 {
		return "no data files"
	}
	var total int64
	for _, s := range sizes {
		total += s
	}
	mib := func(b int64) float64 { return float64(b) / (1 << 20) }
	return fmt.Sprintf("%d data files, %.1f MiB of Parquet, %.2f / %.2f / %.2f MiB smallest / median / largest",
		len(sizes), mib(total), mib(sizes[0]), mib(sizes[len(sizes)/2]), mib(sizes[len(sizes)-1]))
}

// scDataGets returns the node's data file reads served from its cache
// (mink_objects_cache_hits_total of /metrics), or 0 when it cannot tell.
func scDataGets(ctx context.Context, nodeURL string) float64 {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, nodeURL+"/metrics", nil)
	if err != nil {
		return 0
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "mink_objects_cache_hits_total "); ok {
			f, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return f
		}
	}
	return 0
}
