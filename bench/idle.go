package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/devenv"
	"github.com/minkhq/mink/internal/pglocal"
	"github.com/minkhq/mink/internal/testkit/proc"
)

// The idle scenario (issue 14, fault 4): what a fully indexed cluster costs
// while nothing arrives, in CPU of the Mink nodes, of Kafka and of
// PostgreSQL, each a process (tree) of its own.

const (
	// idleTables × idlePartitions partitions, on idleNodes nodes.
	idleTables     = 100
	idlePartitions = 4
	idleNodes      = 3
	// idleRecords are produced to every partition before the window.
	idleRecords = 10
	// idleSetupTimeout bounds the wait until everything is indexed and
	// committed.
	idleSetupTimeout = 5 * time.Minute
	// idleSettle is the wait between the last commit and the window.
	idleSettle = 70 * time.Second
)

// Figure names of the idle scenario.
const (
	idleFigMink     = "Mink nodes"
	idleFigPerLease = "Mink per partition lease"
	idleFigKafka    = "Kafka (kfake process)"
	idleFigPostgres = "PostgreSQL (server processes)"
)

func init() {
	register(Scenario{
		Name:  "idle",
		Title: "Idle: what a caught-up cluster costs while nothing arrives",
		About: fmt.Sprintf(`%d tables × %d partitions (raw values) on %d `+"`mink serve`"+` processes
with default settings (lease_ttl 30 s, commit interval 2 s), a kfake broker in a process
of its own (bench/kfake) and a throwaway PostgreSQL server. The nodes start first, then
the tables are created and %d records produced to every partition; once every partition
is indexed, every data file committed and the leases held, the scenario waits 70 s more
(what follows a table's last commit runs once: statistics within 30 s, then collection
of the metadata file they replace within 30 s; collection runs once more 10 min after
the last commit, outside the window) and measures the CPU time (utime+stime in /proc) of the
nodes, of the kfake process and of the postmaster's process tree (its live children,
and the children it reaped) over a 30 s window in which nothing is produced, read or
queried. Millicores = CPU-ms / window-s. The machine's other work adds to them: the
figures are an upper bound.`, idleTables, idlePartitions, idleNodes, idleRecords),
		Run: runIdle,
	})
}

// idleResult is one run's measurements.
type idleResult struct {
	// mink, kafka, pg are millicores over the window.
	mink, kafka, pg float64
	// leases are the partition leases held per node id.
	leases map[string]int
	// xacts is PostgreSQL's committed transactions per second over the
	// window (pg_stat_database).
	xacts float64
}

func runIdle(ctx context.Context, h *H) error {
	tmp, err := h.TempDir()
	if err != nil {
		return err
	}
	bin, err := memBuild(ctx, tmp)
	if err != nil {
		return err
	}
	kbin := filepath.Join(tmp, "kfake")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", kbin, "./bench/kfake")
	cmd.Dir = repoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("idle: go build kfake: %w\n%s", err, out)
	}
	// A server of its own: the shared one of MINK_TEST_POSTGRES_URL may
	// serve others, whose work would count.
	pg, err := pglocal.StartPostgres(ctx)
	if err != nil {
		return err
	}
	defer pg.Stop()
	window := ifQuick(h, 30*time.Second, 15*time.Second)
	h.Figure(Figure{Name: idleFigMink, Unit: "millicores", Max: 0.1 * idleTables * idlePartitions,
		Note: fmt.Sprintf("%d processes together; target 0.1 per partition lease", idleNodes)})
	h.Figure(Figure{Name: idleFigPerLease, Unit: "millicores", Max: 0.1,
		Note: fmt.Sprintf("Mink nodes ÷ %d partition leases", idleTables*idlePartitions)})
	h.Figure(Figure{Name: idleFigKafka, Unit: "millicores", Max: 24.5,
		Note: "target: a tenth of the 245 measured before issue 14"})
	h.Figure(Figure{Name: idleFigPostgres, Unit: "millicores", Max: 6.2,
		Note: "postmaster and its children; target: a tenth of the 62 measured before issue 14"})
	var last idleResult
	for run := 0; run < h.Runs; run++ {
		r, err := idleRun(ctx, h, bin, kbin, pg.URL, filepath.Join(tmp, fmt.Sprintf("run%d", run)), window)
		if err != nil {
			return fmt.Errorf("idle: run %d: %w", run+1, err)
		}
		h.Add(idleFigMink, r.mink)
		h.Add(idleFigPerLease, r.mink/float64(idleTables*idlePartitions))
		h.Add(idleFigKafka, r.kafka)
		h.Add(idleFigPostgres, r.pg)
		last = r
	}
	var split []string
	for _, id := range slices.Sorted(maps.Keys(last.leases)) {
		split = append(split, fmt.Sprintf("%s %d", id, last.leases[id]))
	}
	h.Note("Last run: partition leases per node: %s; PostgreSQL committed %.1f transactions/s over the window "+
		"(pg_stat_database, all databases).", strings.Join(split, ", "), last.xacts)
	return nil
}

// idleRun starts kfake and the nodes on a fresh schema of pgBase, creates
// the tables, produces, waits until all is indexed and committed, and
// measures the window.
func idleRun(ctx context.Context, h *H, bin, kbin, pgBase, dir string, window time.Duration) (idleResult, error) {
	var r idleResult
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return r, err
	}
	port, err := proc.FreePort()
	if err != nil {
		return r, err
	}
	kp, err := proc.Start(kbin, []string{"-port", strconv.Itoa(port), "-topics", strconv.Itoa(idleTables),
		"-partitions", strconv.Itoa(idlePartitions), "-prefix", "idle-"}, filepath.Join(dir, "kfake.log"))
	if err != nil {
		return r, err
	}
	defer func() { _ = kp.Stop(10 * time.Second) }()
	broker := fmt.Sprintf("127.0.0.1:%d", port)
	if err := idleWaitLine(ctx, kp, "ready", 30*time.Second); err != nil {
		return r, fmt.Errorf("kfake: %w", err)
	}
	pgURL, err := newSchema(ctx, pgBase)
	if err != nil {
		return r, err
	}
	conn, err := pgx.Connect(ctx, pgURL)
	if err != nil {
		return r, err
	}
	defer conn.Close(context.Background())
	var backend int
	if err := conn.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&backend); err != nil {
		return r, err
	}
	postmaster, err := idleParent(backend)
	if err != nil {
		return r, err
	}

	var nodes []*memNode
	defer func() {
		for _, n := range nodes {
			n.stop()
		}
	}()
	for i := range idleNodes {
		id := fmt.Sprintf("idle-%d", i+1)
		n, err := startMemNode(ctx, bin, filepath.Join(dir, id), []string{"--postgres", pgURL, "--kafka", broker,
			"--node-id", id, "--cache-dir", filepath.Join(dir, id, "cache")})
		if err != nil {
			return r, err
		}
		nodes = append(nodes, n)
	}
	start := time.Now()
	if err := idleCreateTables(ctx, nodes[0].url); err != nil {
		return r, nodes[0].explain(err)
	}
	if err := idleProduce(ctx, broker); err != nil {
		return r, err
	}
	if err := idleWaitCommitted(ctx, conn); err != nil {
		return r, nodes[0].explain(err)
	}
	h.Logf("indexed and committed %d partitions in %v", idleTables*idlePartitions, time.Since(start).Round(time.Millisecond))
	// What follows a table's last commit runs once: statistics (every
	// 30 s), then collection of the metadata file they replaced (every
	// 30 s).
	if !sleep(ctx, idleSettle) {
		return r, ctx.Err()
	}

	xacts := func() (float64, error) {
		var n float64
		err := conn.QueryRow(ctx, `SELECT sum(xact_commit)::float8 FROM pg_stat_database`).Scan(&n)
		return n, err
	}
	x0, err := xacts()
	if err != nil {
		return r, err
	}
	pids := make([]int, len(nodes))
	for i, n := range nodes {
		pids[i] = n.Pid()
	}
	m0, k0, p0 := idleCPU(pids...), idleCPU(kp.Pid()), idleTreeCPU(postmaster)
	t0 := time.Now()
	if !sleep(ctx, window) {
		return r, ctx.Err()
	}
	m1, k1, p1 := idleCPU(pids...), idleCPU(kp.Pid()), idleTreeCPU(postmaster)
	secs := time.Since(t0).Seconds()
	x1, err := xacts()
	if err != nil {
		return r, err
	}
	for _, n := range nodes {
		select {
		case <-n.Done():
			return r, n.explain(errors.New("a node exited during the window"))
		default:
		}
	}
	mc := func(d time.Duration) float64 { return float64(d.Milliseconds()) / secs }
	r.mink, r.kafka, r.pg = mc(m1-m0), mc(k1-k0), mc(p1-p0)
	r.xacts = (x1 - x0) / secs
	r.leases = map[string]int{}
	rows, err := conn.Query(ctx, `SELECT holder, count(*) FROM leases
		WHERE kind = 'partition' AND holder IS NOT NULL AND expires_at > now() GROUP BY holder`)
	if err != nil {
		return r, err
	}
	var holder string
	var count int
	if _, err := pgx.ForEachRow(rows, []any{&holder, &count}, func() error {
		r.leases[holder] = count
		return nil
	}); err != nil {
		return r, err
	}
	h.Logf("window %.0f s: Mink %.1f, Kafka %.1f, PostgreSQL %.1f millicores; %.1f transactions/s; leases %v",
		secs, r.mink, r.kafka, r.pg, r.xacts, r.leases)
	return r, nil
}

func sleep(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// idleWaitLine waits until p's log has a line equal to line.
func idleWaitLine(ctx context.Context, p *proc.Process, line string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if slices.Contains(p.Tail(5, nil), line) {
			return nil
		}
		select {
		case <-p.Done():
			return fmt.Errorf("exited (%v): %v", p.WaitErr(), p.Tail(10, nil))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no %q after %v", line, timeout)
		}
	}
}

// idleCreateTables creates the tables through the node at nodeURL, 8 at a
// time.
func idleCreateTables(ctx context.Context, nodeURL string) error {
	var wg sync.WaitGroup
	errs := make([]error, idleTables)
	sem := make(chan struct{}, 8)
	for i := range idleTables {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			errs[i] = devenv.CreateTable(ctx, nodeURL, map[string]any{"namespace": "idle", "name": fmt.Sprintf("t%03d", i),
				"topic": fmt.Sprintf("idle-%03d", i), "value_format": "raw", "start": "earliest"})
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// idleProduce writes idleRecords records to every partition.
func idleProduce(ctx context.Context, broker string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return err
	}
	defer cl.Close()
	var recs []*kgo.Record
	for t := range idleTables {
		for p := range idlePartitions {
			for i := range idleRecords {
				recs = append(recs, &kgo.Record{Topic: fmt.Sprintf("idle-%03d", t), Partition: int32(p),
					Value: fmt.Appendf(nil, "record %d of partition %d", i, p)})
			}
		}
	}
	return cl.ProduceSync(ctx, recs...).FirstErr()
}

// idleWaitCommitted polls Postgres until every partition is indexed to its
// last record, no data file waits for a commit, and every lease is held.
func idleWaitCommitted(ctx context.Context, conn *pgx.Conn) error {
	deadline := time.Now().Add(idleSetupTimeout)
	var indexed, pending, held int
	for {
		err := conn.QueryRow(ctx, `SELECT
			(SELECT count(*) FROM (SELECT table_id, partition FROM ranges GROUP BY 1, 2 HAVING max(end_offset) >= $1) i),
			(SELECT count(*) FROM data_files WHERE committed_snapshot_id IS NULL AND removed_snapshot_id IS NULL),
			(SELECT count(*) FROM leases WHERE holder IS NOT NULL AND expires_at > now())`, idleRecords).Scan(&indexed, &pending, &held)
		if err != nil {
			return err
		}
		// A table's partition leases and its writer lease (the dead-letter
		// tables' ranges are the table's).
		if indexed == idleTables*idlePartitions && pending == 0 && held == idleTables*(idlePartitions+1) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not indexed after %v: %d partitions indexed, %d files not committed, %d leases held",
				idleSetupTimeout, indexed, pending, held)
		}
		if !sleep(ctx, 500*time.Millisecond) {
			return ctx.Err()
		}
	}
}

// clockTick is the unit of /proc/PID/stat's times (USER_HZ, 100 on Linux).
const clockTick = 10 * time.Millisecond

// idleStat returns fields of /proc/pid/stat after the command name:
// out[0] is the state (field 3).
func idleStat(pid int) ([]string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil, fmt.Errorf("/proc/%d/stat: no command", pid)
	}
	return strings.Fields(s[i+1:]), nil
}

// idleTimes returns utime+stime of pid, and with children also the
// children's it reaped (cutime+cstime).
func idleTimes(pid int, children bool) time.Duration {
	f, err := idleStat(pid)
	if err != nil || len(f) < 15 {
		return 0
	}
	// Fields 14-17 (utime, stime, cutime, cstime) are f[11:15].
	var ticks int64
	n := 2
	if children {
		n = 4
	}
	for _, v := range f[11 : 11+n] {
		t, _ := strconv.ParseInt(v, 10, 64)
		ticks += t
	}
	return time.Duration(ticks) * clockTick
}

// idleCPU returns the CPU time the processes used so far.
func idleCPU(pids ...int) time.Duration {
	var d time.Duration
	for _, p := range pids {
		d += idleTimes(p, false)
	}
	return d
}

// idleParent returns the parent process id of pid.
func idleParent(pid int) (int, error) {
	f, err := idleStat(pid)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(f[1])
}

// idleTreeCPU returns the CPU time of root, of its live children and of
// the children it reaped (PostgreSQL's backends are the postmaster's
// children).
func idleTreeCPU(root int) time.Duration {
	d := idleTimes(root, true)
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if pp, err := idleParent(pid); err == nil && pp == root {
			d += idleTimes(pid, false)
		}
	}
	return d
}
