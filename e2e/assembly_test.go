package e2e

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/devenv"
	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/tables"
)

// TestAssemblySlowTopic is the case of issue 12 (docs/design.md §4.6,
// "assembly"): one record every 50 ms for 5 minutes (MINK_ASSEMBLY_SECONDS)
// with a 200 ms flush ends with at most 3 data files per partition in the
// current snapshot (planned with iceberg-go), every record exactly once,
// read with iceberg-go through each node (the assembled files are built on
// a cache miss from their keys, checked against the recorded SHA-256).
// Without assembly it ends with one file per flush: about 750 per
// partition.
func TestAssemblySlowTopic(t *testing.T) {
	t.Parallel()
	seconds := 300
	if n, err := strconv.Atoi(os.Getenv("MINK_ASSEMBLY_SECONDS")); err == nil {
		seconds = n
	}
	ctx := context.Background()
	env, err := devenv.StartEnv(ctx, devenv.DevConfig{Nodes: 2, PostgresURL: pgtest.Schema(t), EphemeralPorts: true,
		LeaseTTL: 3 * time.Second, FlushInterval: 200 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(env.Stop)
	const partitions = 2
	createTable(t, env, partitions, map[string]any{
		"namespace": "asm", "name": "slow", "topic": "slow", "value_format": "raw"})
	cl, err := kgo.NewClient(kgo.SeedBrokers(env.Brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer cl.Close()
	cats := catalogs(t, env)

	var mu sync.Mutex
	produced := map[pk]string{}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	maxFiles := 0
	for n := 0; n < seconds*20; n++ {
		<-tick.C
		r := &kgo.Record{Topic: "slow", Partition: int32(n % partitions), Value: []byte(strconv.Itoa(n))}
		require.NoError(t, cl.ProduceSync(ctx, r).FirstErr())
		mu.Lock()
		produced[pk{r.Partition, r.Offset}] = string(r.Value)
		mu.Unlock()
		if n%200 == 199 { // every 10 s: the files stay few while records arrive
			files := filesPerPartition(t, loadTable(t, cats[n%len(cats)], "slow"))
			for _, c := range files {
				maxFiles = max(maxFiles, c)
			}
		}
	}
	var files map[int32]int
	deadline := time.Now().Add(time.Minute)
	for {
		files = filesPerPartition(t, loadTable(t, cats[0], "slow"))
		done := len(files) == partitions
		for _, c := range files {
			done = done && c <= 3
		}
		if done {
			break
		}
		require.True(t, time.Now().Before(deadline), "files per partition after producing stopped: %v", files)
		time.Sleep(time.Second)
	}
	t.Logf("%d records; files per partition at the end %v, at most %d while producing", len(produced), files, maxFiles)
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
	tasks, err := tbl.Scan().PlanFiles(context.Background())
	require.NoError(t, err)
	out := map[int32]int{}
	for _, task := range tasks {
		ref, ok := tables.ParseDataFileKey(tables.Key(task.File.FilePath()))
		require.True(t, ok, task.File.FilePath())
		out[ref.Partition]++
	}
	return out
}
