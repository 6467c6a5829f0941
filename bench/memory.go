package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/auth"
	"github.com/minkhq/mink/devenv"
	"github.com/minkhq/mink/internal/testkit/proc"
	"github.com/minkhq/mink/node"
)

// The memory scenario (issue scenario 5): peak resident set size of one
// `mink serve` process indexing a 32-partition backlog at full speed, with
// default settings and with a 10 GiB cache configured.

const (
	// memTopic is the topic of the backlog.
	memTopic = "bench-memory"
	// memPartitions is its partition count.
	memPartitions = 32
	// memTargetMiB is the target peak RSS of one node, in MiB.
	memTargetMiB = 1024
	// memQuickRecords is the backlog in records with -quick (the full run
	// produces all of FlightsFile).
	memQuickRecords = 300_000
	// memIndexTimeout bounds one node's indexing of the backlog.
	memIndexTimeout = 10 * time.Minute
)

// Figure names of the memory scenario.
const (
	memFigDefault = "peak RSS, default settings"
	memFigCache   = "peak RSS, 10 GiB cache"
	memFigTime    = "time to index the backlog"
	memFigRate    = "indexing rate"
	memFigLive    = "live heap, default settings"
)

func init() {
	register(Scenario{
		Name:  "memory",
		Title: "Memory: peak RSS of one node indexing 32 partitions",
		About: `A backlog of flight records (the JSON values of ` + FlightsFile + `, round-robin
over a 32-partition topic of a kfake broker in the bench process) is produced, and a
json table over the topic created, before the measured ` + "`mink serve`" + ` process
starts with default flags (roles indexer and server, 16 MiB ranges, 2 s flush
interval, 10 GiB cache): it takes all 32 partition leases in its first round and
indexes the whole backlog at once. Peak RSS is the process's VmHWM
(/proc/PID/status), read once every partition has lag 0. The second node is given
` + "`--cache-size 10GiB`" + ` explicitly (the default is the same) and, after
indexing, also serves every data file once through the S3 API. Indexing time runs
from the node's first /readyz (its first round takes the leases) to lag 0 on every
partition, polled every 100 ms. Go heap figures come from the node's /metrics
(sampled twice a second) and its gctrace (GODEBUG=gctrace=1). Kafka runs on the
same cores as the node.`,
		Run: runMemory,
	})
}

// memVariant is one node configuration of the scenario.
type memVariant struct {
	// figure is the name of its peak RSS figure.
	figure string
	// args are flags of `mink serve` beyond the common ones.
	args []string
	// read asks for every data file to be read through the S3 API once
	// indexing has caught up.
	read bool
}

// memResult is what one node run measured.
type memResult struct {
	// peakRSS is VmHWM at the end of the run, in bytes.
	peakRSS int64
	// idleRSS is the VmRSS of the node that created the table (ready, no
	// indexer role, no lease), in bytes.
	idleRSS int64
	// heapInuse and goSys are the largest go_memstats_heap_inuse_bytes and
	// go_memstats_sys_bytes sampled from /metrics, in bytes.
	heapInuse, goSys int64
	// liveHeap is the largest live heap after a GC (gctrace), in bytes.
	liveHeap int64
	// index is the time from the node's readiness (its first round, which
	// takes every partition lease) to lag 0 on every partition.
	index time.Duration
	// readFiles and readBytes count the data files read through the S3
	// API (read variant only); readTime is how long that took.
	readFiles int
	readBytes int64
	readTime  time.Duration
}

// runMemory produces the backlog once, builds the mink binary, measures
// both variants h.Runs times (each on a fresh schema, indexing from the
// start of the topic), and, when a peak RSS median is over the target (or
// with -quick), summarizes a heap profile of an in-process node.
func runMemory(ctx context.Context, h *H) error {
	limit := ifQuick(h, 0, memQuickRecords)
	values, err := flightValues(h, limit)
	if err != nil {
		return err
	}
	records := len(values)

	k, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(memPartitions, memTopic))
	if err != nil {
		return fmt.Errorf("memory: kafka: %w", err)
	}
	defer k.Close()
	brokers := k.ListenAddrs()
	start := time.Now()
	produced, err := produce(ctx, brokers, memTopic, memPartitions, values)
	if err != nil {
		return err
	}
	values = nil // kfake holds its own copy
	runtime.GC()
	h.Logf("produced %d records (%.0f MB of values) to %d partitions in %v",
		records, float64(produced)/1e6, memPartitions, time.Since(start).Round(time.Millisecond))

	tmp, err := h.TempDir()
	if err != nil {
		return err
	}
	bin, err := memBuild(ctx, tmp)
	if err != nil {
		return err
	}

	variants := []memVariant{
		{figure: memFigDefault},
		{figure: memFigCache, args: []string{"--cache-size", "10GiB"}, read: true},
	}
	h.Figure(Figure{Name: memFigDefault, Unit: "MiB", Max: memTargetMiB,
		Note: "VmHWM of the process"})
	h.Figure(Figure{Name: memFigCache, Unit: "MiB", Max: memTargetMiB,
		Note: "--cache-size 10GiB, then every data file read once via S3; same target"})
	h.Figure(Figure{Name: memFigLive, Unit: "MiB",
		Note: "largest heap left after a GC (gctrace); informative: with GOGC=100 the heap grows to about twice it"})
	h.Figure(Figure{Name: memFigTime, Unit: "s",
		Note: fmt.Sprintf("%d records, %.0f MB of JSON values; default settings; informative", records, float64(produced)/1e6)})
	h.Figure(Figure{Name: memFigRate, Unit: "records/s",
		Note: "backlog records / indexing time, default settings; informative"})

	var last map[string]memResult
	peaks := map[string][]float64{}
	for run := 0; run < h.Runs; run++ {
		last = map[string]memResult{}
		for vi, v := range variants {
			dir := filepath.Join(tmp, fmt.Sprintf("run%d-%d", run, vi))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			pg, err := h.Postgres(ctx)
			if err != nil {
				return err
			}
			r, err := memRun(ctx, h, bin, pg, brokers, dir, v)
			if err != nil {
				return fmt.Errorf("memory: %s: %w", v.figure, err)
			}
			last[v.figure] = r
			h.Add(v.figure, memMiB(r.peakRSS))
			peaks[v.figure] = append(peaks[v.figure], memMiB(r.peakRSS))
			if v.figure == memFigDefault {
				h.Add(memFigLive, memMiB(r.liveHeap))
				h.Add(memFigTime, r.index.Seconds())
				h.Add(memFigRate, float64(records)/r.index.Seconds())
			}
		}
	}
	h.Note("Backlog: %.1f MB of values per partition, below the 16 MiB range size: ranges are cut by "+
		"the flush interval, so a longer backlog (or a faster node) would buffer larger ranges.",
		float64(produced)/1e6/memPartitions)
	for _, v := range variants {
		r := last[v.figure]
		msg := fmt.Sprintf("%s, last run: RSS of a ready node without leases %.0f MiB; "+
			"largest Go heap in use %.0f MiB (go_memstats_heap_inuse_bytes), live after a GC at most %.0f MiB; "+
			"Go runtime memory from the OS (go_memstats_sys_bytes) %.0f MiB; indexing took %.1f s.",
			v.figure, memMiB(r.idleRSS), memMiB(r.heapInuse), memMiB(r.liveHeap), memMiB(r.goSys), r.index.Seconds())
		if v.read {
			msg += fmt.Sprintf(" S3 read of %d data files (%.0f MB) took %.1f s.",
				r.readFiles, float64(r.readBytes)/1e6, r.readTime.Seconds())
		}
		h.Note("%s", msg)
	}
	over := false
	for _, p := range peaks {
		over = over || median(p) > memTargetMiB
	}
	// -quick profiles even under the target, so that the path is exercised.
	if !over && !h.Quick {
		return nil
	}
	dir := filepath.Join(tmp, "profile")
	pg, err := h.Postgres(ctx)
	if err != nil {
		return err
	}
	if _, err := memCreateTable(ctx, bin, pg, brokers, dir); err != nil {
		return err
	}
	p, err := memProfile(ctx, h, pg, brokers, dir)
	if err != nil {
		return fmt.Errorf("memory: heap profile: %w", err)
	}
	h.Note("The heap profile is of an in-process equivalent (`mink serve --pprof` would profile the real process): "+
		"node.Start with default settings in the bench process, indexing the same backlog; of %d heap profiles "+
		"taken once a second (each right after a forced GC) while it indexed, the largest: %.0f MiB live in the node's heap "+
		"(sampled in-use bytes scaled as pprof does; allocations of kfake and of the bench itself left out). "+
		"Top allocation sites (allocating function ← innermost Mink function, or the goroutine when there is none):", p.snapshots, memMiB(p.total))
	for _, s := range p.top {
		h.Note("heap: %s ← %s: %.0f MiB (%.0f%%)", s.leaf, s.mink, memMiB(s.bytes), 100*float64(s.bytes)/float64(p.total))
	}
	var by []string
	for _, g := range p.groups {
		if pct := 100 * float64(g.bytes) / float64(p.total); pct >= 1 {
			by = append(by, fmt.Sprintf("%s %.0f%%", g.name, pct))
		}
	}
	h.Note("heap by package of the innermost Mink frame: %s. The kgo and s2 sites hold fetched records: "+
		"kgo.Record structs (%d bytes each, against %.0f bytes of JSON value on average) and the "+
		"decompressed batches their values point into, alive while an indexer holds any record of them "+
		"(its range buffer) or the Kafka client has their fetch buffered; the datafile sites are the "+
		"concurrent Parquet builds.", strings.Join(by, ", "), unsafe.Sizeof(kgo.Record{}), float64(produced)/float64(records))
	return nil
}

// memHeap summarizes a heap profile of the node.
type memHeap struct {
	// snapshots is how many profiles were taken; the summary is of the one
	// with the largest total.
	snapshots int
	// total is the estimated in-use bytes of the node's allocations.
	total int64
	// top are the largest allocation sites, largest first.
	top []memSite
	// groups sums all sites by the package of their innermost Mink frame
	// (or the Kafka client's goroutines, or other), largest first.
	groups []memGroup
}

// memGroup is the in-use bytes of a group of allocation sites.
type memGroup struct {
	name  string
	bytes int64
}

// memSite is an allocation site of a heap profile.
type memSite struct {
	// leaf is the allocating function (the innermost frame outside the
	// runtime); mink is the innermost frame in a Mink package, or else
	// "goroutine F" with F the outermost frame (the goroutine's function).
	leaf, mink string
	// bytes is its estimated in-use bytes.
	bytes int64
}

// memProfile starts a node in this process (node.Start, default settings)
// over the table already created in the schema at pg, takes a heap profile
// once a second until the backlog is indexed, and summarizes the profile
// with the most node memory in use.
func memProfile(ctx context.Context, h *H, pg string, brokers []string, dir string) (memHeap, error) {
	var best memHeap
	logf, err := os.Create(filepath.Join(dir, "inprocess.log"))
	if err != nil {
		return best, err
	}
	defer logf.Close()
	nd, err := node.Start(ctx, node.Config{
		PostgresURL: pg, KafkaBrokers: brokers, Listen: "127.0.0.1:0", NodeID: "bench-mem-inprocess", Auth: auth.ModeNone,
		CacheDir: filepath.Join(dir, "inprocess-cache"), Logger: slog.New(slog.NewTextHandler(logf, nil)),
	})
	if err != nil {
		return best, err
	}
	defer nd.Stop()

	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var count int
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-pctx.Done():
				return
			case <-time.After(time.Second):
			}
			count++
			runtime.GC() // the profile is as of the last GC: make it now
			if p := memHeapProfile(); p.total > best.total {
				best = p
			}
		}
	}()
	started := time.Now() // the first round (leases) runs in the background
	caught, err := memWaitIndexed(ctx, nd.URL(), nd.Done(), "bench.flights")
	cancel()
	wg.Wait() // best and count are ours again
	best.snapshots = count
	if err != nil {
		return best, err
	}
	h.Logf("in-process node indexed in %v", caught.Sub(started).Round(time.Millisecond))
	if best.total == 0 {
		return best, errors.New("no heap profile taken")
	}
	return best, nil
}

// memHeapProfile reads the current heap profile (as of the last GC) and
// sums the in-use bytes of the node's allocation sites: stacks through
// kfake (the broker's log) or package main (the bench) are left out.
// Sampled bytes are scaled to estimates as pprof does for
// runtime.MemProfileRate sampling.
func memHeapProfile() memHeap {
	var recs []runtime.MemProfileRecord
	for {
		n, ok := runtime.MemProfile(recs, true)
		if ok {
			recs = recs[:n]
			break
		}
		recs = make([]runtime.MemProfileRecord, n+64)
	}
	rate := float64(runtime.MemProfileRate)
	sites := map[[2]string]int64{}
	groups := map[string]int64{}
	var p memHeap
recs:
	for _, r := range recs {
		bytes, objs := r.InUseBytes(), r.InUseObjects()
		if bytes <= 0 || objs <= 0 {
			continue
		}
		est := int64(float64(bytes) / (1 - math.Exp(-float64(bytes)/float64(objs)/rate)))
		leaf, mink, outer := "", "", ""
		frames := runtime.CallersFrames(r.Stack())
		for {
			f, more := frames.Next()
			fn := f.Function
			switch {
			case strings.HasPrefix(fn, "github.com/twmb/franz-go/pkg/kfake"), strings.HasPrefix(fn, "main."):
				continue recs
			case leaf == "" && fn != "" && !strings.HasPrefix(fn, "runtime."):
				leaf = fn
			}
			if mink == "" && strings.HasPrefix(fn, "github.com/minkhq/mink/") {
				mink = fn
			}
			if fn != "" && !strings.HasPrefix(fn, "runtime.") {
				outer = fn
			}
			if !more {
				break
			}
		}
		where, group := memShortFunc(mink), ""
		switch {
		case mink != "":
			group, _, _ = strings.Cut(where, ".")
		case strings.HasPrefix(outer, "github.com/twmb/franz-go/"):
			group = "Kafka client goroutines"
		default:
			group = "other"
		}
		if mink == "" {
			where = "goroutine " + memShortFunc(outer)
		}
		sites[[2]string{memShortFunc(leaf), where}] += est
		groups[group] += est
		p.total += est
	}
	for g, b := range groups {
		p.groups = append(p.groups, memGroup{name: g, bytes: b})
	}
	slices.SortFunc(p.groups, func(a, b memGroup) int { return cmp.Compare(b.bytes, a.bytes) })
	for k, b := range sites {
		p.top = append(p.top, memSite{leaf: k[0], mink: k[1], bytes: b})
	}
	slices.SortFunc(p.top, func(a, b memSite) int { return cmp.Compare(b.bytes, a.bytes) })
	if len(p.top) > 8 {
		p.top = p.top[:8]
	}
	return p
}

// memShortFunc drops the import path of a function name, keeping its package
// name: "github.com/minkhq/mink/indexer.(*Indexer).Run" → "indexer.(*Indexer).Run".
func memShortFunc(fn string) string {
	if fn == "" {
		return "?"
	}
	if i := strings.LastIndexByte(fn, '/'); i >= 0 {
		return fn[i+1:]
	}
	return fn
}

// memMiB converts bytes to MiB.
func memMiB(b int64) float64 { return float64(b) / (1 << 20) }

// memBuild builds the mink binary into dir and returns its path.
func memBuild(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "mink")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/mink")
	cmd.Dir = repoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("memory: go build: %w\n%s", err, out)
	}
	return bin, nil
}

// memRun creates the table in a fresh schema (memCreateTable), then starts
// the measured node with variant v, waits until the backlog is indexed (and
// read, for v.read), and stops it.
func memRun(ctx context.Context, h *H, bin, pg string, brokers []string, dir string, v memVariant) (memResult, error) {
	var r memResult
	var err error
	if r.idleRSS, err = memCreateTable(ctx, bin, pg, brokers, dir); err != nil {
		return r, err
	}
	common := []string{"--postgres", pg, "--kafka", strings.Join(brokers, ",")}
	n, err := startMemNode(ctx, bin, filepath.Join(dir, "node"), append(append(common,
		"--node-id", "bench-mem", "--cache-dir", filepath.Join(dir, "node", "cache")), v.args...))
	if err != nil {
		return r, err
	}
	defer n.stop()
	var sampled memSamples
	sctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		sampled.run(sctx, n.url)
	}()
	stopSampling := func() { cancel(); wg.Wait() }
	defer stopSampling()
	caught, err := memWaitIndexed(ctx, n.url, n.Done(), "bench.flights")
	if err != nil {
		return r, n.explain(err)
	}
	r.index = caught.Sub(n.readyAt)
	h.Logf("%s: indexed in %v", v.figure, r.index.Round(time.Millisecond))

	if v.read {
		start := time.Now()
		r.readFiles, r.readBytes, err = memReadDataFiles(ctx, pg, n.url)
		if err != nil {
			return r, n.explain(err)
		}
		r.readTime = time.Since(start)
	}
	if r.peakRSS, err = memProcStatus(n.Pid(), "VmHWM"); err != nil {
		return r, n.explain(err)
	}
	r.liveHeap = n.liveHeap()
	stopSampling()
	r.heapInuse, r.goSys = sampled.heapInuse.Load(), sampled.goSys.Load()
	return r, nil
}

// memCreateTable creates the table of the backlog in the schema at pg
// through a `mink serve` process without the indexer role, so that the
// measured node takes every partition lease in its first sharing round, at
// start, rather than up to lease_ttl/3 later. It returns that node's RSS
// (a ready node with no lease) in bytes.
func memCreateTable(ctx context.Context, bin, pg string, brokers []string, dir string) (int64, error) {
	setup, err := startMemNode(ctx, bin, filepath.Join(dir, "setup"), []string{
		"--postgres", pg, "--kafka", strings.Join(brokers, ","),
		"--node-id", "bench-mem-setup", "--roles", "server", "--cache-dir", filepath.Join(dir, "setup", "cache")})
	if err != nil {
		return 0, err
	}
	defer setup.stop()
	if err := devenv.CreateTable(ctx, setup.url, map[string]any{
		"namespace": "bench", "name": "flights", "topic": memTopic,
		"value_format": "json", "schema": json.RawMessage(FlightsSchema), "start": "earliest",
	}); err != nil {
		return 0, setup.explain(err)
	}
	rss, err := memProcStatus(setup.Pid(), "VmRSS")
	if err != nil {
		return 0, setup.explain(err)
	}
	return rss, nil
}

// memNode is one `mink serve` process.
type memNode struct {
	*proc.Process
	url string
	// readyAt is when /readyz first answered 200: the node has registered,
	// and takes its leases in the same round.
	readyAt time.Time
}

// startMemNode starts `mink serve` with args on a free loopback port,
// logging to dir/mink.log, and waits until it answers /readyz.
func startMemNode(ctx context.Context, bin, dir string, args []string) (*memNode, error) {
	port, err := proc.FreePort()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	args = append([]string{"serve", "--listen", fmt.Sprintf("127.0.0.1:%d", port), "--advertise", url, "--auth", "none"}, args...)
	// One line per GC on stderr (liveHeap reads them from the log).
	p, err := proc.Start(bin, args, filepath.Join(dir, "mink.log"), "GODEBUG=gctrace=1")
	if err != nil {
		return nil, err
	}
	n := &memNode{Process: p, url: url}
	if err := p.WaitReady(ctx, url, 60*time.Second); err != nil {
		n.stop()
		return nil, fmt.Errorf("mink: %w: %s", err, n.tail(20))
	}
	n.readyAt = time.Now()
	return n, nil
}

// stop stops the process: SIGTERM, then SIGKILL after 15 s. It returns once
// the process has exited. Safe to call more than once.
func (n *memNode) stop() { _ = n.Stop(15 * time.Second) }

// memGCTrace matches the heap sizes of a gctrace line, "… 45->47->23 MB, 46 MB
// goal, …": heap at the start and end of the GC and live heap, in MiB.
var memGCTrace = regexp.MustCompile(`(\d+)->(\d+)->(\d+) MB, \d+ MB goal`)

// liveHeap returns the largest live heap after a GC that the node's
// gctrace lines report, in bytes (0 without any).
func (n *memNode) liveHeap() int64 {
	b, err := os.ReadFile(n.LogPath)
	if err != nil {
		return 0
	}
	var live int64
	for _, m := range memGCTrace.FindAllSubmatch(b, -1) {
		l, _ := strconv.ParseInt(string(m[3]), 10, 64)
		live = max(live, l<<20)
	}
	return live
}

// explain adds the end of the node's log to err, and says if it exited.
func (n *memNode) explain(err error) error {
	select {
	case <-n.Done():
		return fmt.Errorf("%w (mink exited: %v): %s", err, n.WaitErr(), n.tail(20))
	default:
		return fmt.Errorf("%w; mink log: %s", err, n.tail(10))
	}
}

// tail returns the last lines of the node's log but its gctrace lines,
// joined by " | ".
func (n *memNode) tail(lines int) string {
	return strings.Join(n.Tail(lines, func(l string) bool { return !strings.HasPrefix(l, "gc ") }), " | ")
}

// memWaitIndexed polls the table's partitions on the node at url every
// 100 ms until every one has lag 0, or the node is done. It returns when it
// saw the last lag at 0.
func memWaitIndexed(ctx context.Context, url string, done <-chan struct{}, table string) (time.Time, error) {
	var body struct {
		Partitions []struct {
			Partition  int32   `json:"partition"`
			LastStable int64   `json:"last_stable_offset"`
			Lag        int64   `json:"lag"`
			Holder     *string `json:"holder"`
		} `json:"partitions"`
	}
	deadline := time.Now().Add(memIndexTimeout)
	for {
		select {
		case <-done:
			return time.Time{}, errors.New("mink stopped while indexing")
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("backlog not indexed after %v", memIndexTimeout)
		}
		body.Partitions = nil
		if err := proc.GetJSON(ctx, url+"/admin/v1/tables/"+table+"/partitions", &body); err != nil {
			continue // transient (for example Kafka offsets not answered); the deadline bounds it
		}
		all := len(body.Partitions) == memPartitions
		for _, p := range body.Partitions {
			if p.Holder == nil || p.LastStable == 0 || p.Lag > 0 {
				all = false
			}
		}
		if all {
			return time.Now(), nil
		}
	}
}

// memSamples holds the largest Go memory figures seen on a node's /metrics.
type memSamples struct {
	heapInuse, goSys atomic.Int64
}

// run samples n's /metrics every 500 ms until ctx ends.
func (s *memSamples) run(ctx context.Context, url string) {
	for {
		s.sample(ctx, url)
		select {
		case <-ctx.Done():
			return
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func (s *memSamples) sample(ctx context.Context, url string) {
	v, err := proc.Metrics(ctx, url+"/metrics", "go_memstats_heap_inuse_bytes", "go_memstats_sys_bytes")
	if err != nil {
		return
	}
	for i, into := range []*atomic.Int64{&s.heapInuse, &s.goSys} {
		if int64(v[i]) > into.Load() {
			into.Store(int64(v[i]))
		}
	}
}

// memReadDataFiles GETs every data file of the schema at pg through the
// node's S3 API (4 at a time) and returns how many files and bytes it read.
func memReadDataFiles(ctx context.Context, pg, nodeURL string) (files int, bytes int64, err error) {
	conn, err := pgx.Connect(ctx, pg)
	if err != nil {
		return 0, 0, err
	}
	rows, err := conn.Query(ctx, `SELECT path FROM data_files ORDER BY path`)
	if err != nil {
		conn.Close(ctx)
		return 0, 0, err
	}
	paths, err := pgx.CollectRows(rows, pgx.RowTo[string])
	conn.Close(ctx)
	if err != nil {
		return 0, 0, err
	}
	if len(paths) == 0 {
		return 0, 0, errors.New("no data files")
	}
	var (
		total atomic.Int64
		mu    sync.Mutex
		first error
		wg    sync.WaitGroup
		next  atomic.Int64
	)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(paths) || ctx.Err() != nil {
					return
				}
				key, ok := strings.CutPrefix(paths[i], "s3://")
				if !ok {
					key = "mink/" + key // the default warehouse
				}
				n, err := memReadObject(ctx, nodeURL+"/"+key)
				total.Add(n)
				if err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return len(paths), total.Load(), first
}

// memReadObject GETs one object and discards it, returning its length.
func memReadObject(ctx context.Context, url string) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
		return 0, fmt.Errorf("GET %s: %s: %s", url, resp.Status, strings.TrimSpace(string(msg)))
	}
	return io.Copy(io.Discard, resp.Body)
}

// memProcStatus returns a size field of /proc/PID/status (VmRSS, VmHWM, …)
// in bytes.
func memProcStatus(pid int, field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("memory: %w (peak RSS needs Linux /proc)", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		name, val, ok := strings.Cut(line, ":")
		if !ok || name != field {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(val), " kB"), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("memory: /proc/%d/status %s: %w", pid, field, err)
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("memory: /proc/%d/status has no %s", pid, field)
}
