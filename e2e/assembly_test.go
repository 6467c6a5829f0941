package e2e

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/devenv"
	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/tables"
)

// slowTopic is the workload of TestAssemblySlowTopic: one record every
// 50 ms to a table of two partitions for MINK_ASSEMBLY_SECONDS (default
// 300) on two nodes with a 200 ms flush. TestAssemblySlowTopicStart, the
// first test of the package, starts it in the background, so that its 5
// minutes overlap the package's sequential tests (Go runs a t.Parallel
// test only after all of them); TestAssemblySlowTopic (parallel) waits for
// it, checks, and stops it. Run alone, TestAssemblySlowTopic starts it
// itself.
var slowTopic struct {
	once     sync.Once
	done     chan struct{}
	env      *devenv.Env
	cats     []*rest.Catalog
	produced map[pk]string
	maxFiles int
	err      error
	started  bool // the producer runs: done will close
	cleanup  longTB
}

const slowPartitions = 2

// longTB is a testing.TB whose cleanups run when the workload is stopped,
// not when the test that started it ends, and whose failures are recorded.
type longTB struct {
	testing.TB
	cleanups []func()
}

func (l *longTB) Cleanup(f func())                  { l.cleanups = append(l.cleanups, f) }
func (l *longTB) Helper()                           {}
func (l *longTB) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }

func startSlowTopic(t *testing.T) {
	slowTopic.once.Do(func() {
		slowTopic.done = make(chan struct{})
		slowTopic.cleanup.TB = t
		seconds := 300
		if n, err := strconv.Atoi(os.Getenv("MINK_ASSEMBLY_SECONDS")); err == nil {
			seconds = n
		}
		ctx := context.Background()
		env, err := devenv.StartEnv(ctx, devenv.DevConfig{Nodes: 2, PostgresURL: pgtest.Schema(&slowTopic.cleanup), EphemeralPorts: true,
			LeaseTTL: 3 * time.Second, FlushInterval: 200 * time.Millisecond})
		require.NoError(t, err)
		slowTopic.env = env
		createTable(t, env, slowPartitions, map[string]any{
			"namespace": "asm", "name": "slow", "topic": "slow", "value_format": "raw"})
		slowTopic.cats = catalogs(t, env)
		slowTopic.produced = map[pk]string{}
		slowTopic.started = true
		go func() {
			defer close(slowTopic.done)
			slowTopic.err = produceSlowly(ctx, env, seconds)
		}()
	})
}

// produceSlowly is the workload's producer; every 10 s it counts the files
// per partition of the current snapshot (slowTopic.maxFiles).
func produceSlowly(ctx context.Context, env *devenv.Env, seconds int) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(env.Brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return err
	}
	defer cl.Close()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for n := 0; n < seconds*20; n++ {
		<-tick.C
		r := &kgo.Record{Topic: "slow", Partition: int32(n % slowPartitions), Value: []byte(strconv.Itoa(n))}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			return err
		}
		slowTopic.produced[pk{r.Partition, r.Offset}] = string(r.Value)
		if n%200 == 199 {
			tbl, err := slowTopic.cats[n%len(slowTopic.cats)].LoadTable(ctx, table.Identifier{"asm", "slow"})
			if err != nil {
				return err
			}
			files, err := planFilesPerPartition(tbl)
			if err != nil {
				return err
			}
			for _, c := range files {
				slowTopic.maxFiles = max(slowTopic.maxFiles, c)
			}
		}
	}
	return nil
}

// TestAssemblySlowTopicStart starts the workload of TestAssemblySlowTopic.
func TestAssemblySlowTopicStart(t *testing.T) { startSlowTopic(t) }

// TestAssemblySlowTopic is the case of issue 12 (docs/design.md §4.6,
// "assembly"): one record every 50 ms for 5 minutes with a 200 ms flush
// (slowTopic) ends with at most 3 data files per partition in the current
// snapshot (planned with iceberg-go), every record exactly once, read with
// iceberg-go through each node (the assembled files are built on a cache
// miss from their keys, checked against the recorded SHA-256). Without
// assembly it ends with one file per flush: about 750 per partition.
func TestAssemblySlowTopic(t *testing.T) {
	t.Parallel()
	startSlowTopic(t)
	t.Cleanup(func() {
		if slowTopic.env != nil {
			slowTopic.env.Stop()
		}
		for i := len(slowTopic.cleanup.cleanups) - 1; i >= 0; i-- {
			slowTopic.cleanup.cleanups[i]()
		}
	})
	require.True(t, slowTopic.started, "the workload did not start (see TestAssemblySlowTopicStart)")
	<-slowTopic.done
	require.NoError(t, slowTopic.err)
	produced, cats := slowTopic.produced, slowTopic.cats
	var files map[int32]int
	deadline := time.Now().Add(time.Minute)
	for {
		files = filesPerPartition(t, loadTable(t, cats[0], "slow"))
		done := len(files) == slowPartitions
		for _, c := range files {
			done = done && c <= 3
		}
		if done {
			break
		}
		require.True(t, time.Now().Before(deadline), "files per partition after producing stopped: %v", files)
		time.Sleep(time.Second)
	}
	t.Logf("%d records; files per partition at the end %v, at most %d while producing", len(produced), files, slowTopic.maxFiles)
	for i, cat := range cats {
		tbl := loadTable(t, cat, "slow")
		got := readRecords(t, tbl, fmt.Sprintf("node %d", i))
		require.Len(t, got, len(produced))
		for k, v := range produced {
			require.Equal(t, v, got[k], "record %v", k)
		}
	}
}

func loadTable(t *testing.T, cat interface {
	LoadTable(context.Context, table.Identifier) (*table.Table, error)
}, name string) *table.Table {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), table.Identifier{"asm", name})
	require.NoError(t, err)
	return tbl
}

// filesPerPartition counts the data files iceberg-go plans for tbl's
// current snapshot, by partition.
func filesPerPartition(t *testing.T, tbl *table.Table) map[int32]int {
	t.Helper()
	out, err := planFilesPerPartition(tbl)
	require.NoError(t, err)
	return out
}

func planFilesPerPartition(tbl *table.Table) (map[int32]int, error) {
	tasks, err := tbl.Scan().PlanFiles(context.Background())
	if err != nil {
		return nil, err
	}
	out := map[int32]int{}
	for _, task := range tasks {
		ref, ok := tables.ParseDataFileKey(tables.Key(task.File.FilePath()))
		if !ok {
			return nil, fmt.Errorf("not a data file key: %s", task.File.FilePath())
		}
		out[ref.Partition]++
	}
	return out, nil
}
