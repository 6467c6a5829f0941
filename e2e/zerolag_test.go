package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/devenv"
	"github.com/minkhq/mink/internal/clustertest"
	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/internal/testkit/proc"
	"github.com/minkhq/mink/tables"
)

// TestZeroLagLineage: 1,000 rounds (MINK_ZEROLAG_ROUNDS) of produce, then
// three concurrent loads through the three nodes' REST catalogs, read with
// iceberg-go (docs/design.md §4.4).
//
// Zero lag: every acknowledged record is in the snapshot a load returns,
// and no record twice: the snapshot's total-records is the number of
// records produced so far (a raw table has a row for every record), the
// planned data files tile each partition's offsets from 0 past the last
// acknowledged record with no overlap, and a whole-table read every 250
// rounds finds exactly the produced values.
//
// Lineage: the snapshots handed out form one chain. In the metadata each
// load returns, every snapshot handed out in the round before is an
// ancestor of the current one, reached through parents that are all in the
// metadata, each step one sequence number up; the snapshot-log lists both
// in order; the snapshots in between are appends, whose added-records sum
// to the records produced in between, and replaces, which add exactly the
// records they remove. Default history settings (so expiry runs too).
func TestZeroLagLineage(t *testing.T) {
	rounds := 1000
	if n, err := strconv.Atoi(os.Getenv("MINK_ZEROLAG_ROUNDS")); err == nil {
		rounds = n
	}
	ctx := context.Background()
	env, err := devenv.StartEnv(ctx, devenv.DevConfig{Nodes: 3, PostgresURL: pgtest.Schema(t), EphemeralPorts: true,
		LeaseTTL: 3 * time.Second, FlushInterval: 2 * time.Second, CommitInterval: 1500 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(env.Stop)
	const partitions = 4
	createTable(t, env, partitions, map[string]any{
		"namespace": "zl", "name": "events", "topic": "zl", "value_format": "raw"})

	cl, err := kgo.NewClient(kgo.SeedBrokers(env.Brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer cl.Close()
	cats := catalogs(t, env)

	rng := rand.New(rand.NewPCG(7, 11))
	produced := map[pk]string{}
	next := map[int32]int64{} // per partition: one past the last acknowledged offset
	var prev []int64          // snapshot ids handed out in the previous round
	var lat []time.Duration
	handedOut := map[int64]bool{}
	var ops = map[string]int{}
	maxFiles := 0
	began := time.Now()
	for round := 0; round < rounds; round++ {
		p := int32(rng.IntN(partitions))
		var recs []*kgo.Record
		for i := 0; i < 1+rng.IntN(3); i++ {
			recs = append(recs, &kgo.Record{Topic: "zl", Partition: p, Value: []byte(fmt.Sprintf("r%d-%d", round, i))})
		}
		res := cl.ProduceSync(ctx, recs...)
		require.NoError(t, res.FirstErr())
		for _, r := range res {
			produced[pk{r.Record.Partition, r.Record.Offset}] = string(r.Record.Value)
			next[p] = max(next[p], r.Record.Offset+1)
		}

		// Three loads at once, one through each node.
		tbls := make([]*table.Table, len(cats))
		durs := make([]time.Duration, len(cats))
		errs := make([]error, len(cats))
		var wg sync.WaitGroup
		for i, cat := range cats {
			wg.Add(1)
			go func() {
				defer wg.Done()
				start := time.Now()
				tbls[i], errs[i] = cat.LoadTable(ctx, table.Identifier{"zl", "events"})
				durs[i] = time.Since(start)
			}()
		}
		wg.Wait()
		for i := range cats {
			require.NoError(t, errs[i], "round %d load %d", round, i)
		}
		lat = append(lat, durs...)

		var ids []int64
		for i, tbl := range tbls {
			md := tbl.Metadata()
			cur := md.CurrentSnapshot()
			require.NotNil(t, cur, "round %d load %d: no snapshot", round, i)
			require.Equal(t, strconv.Itoa(len(produced)), cur.Summary.Properties["total-records"],
				"round %d load %d: snapshot %d does not hold exactly the records produced", round, i, cur.SnapshotID)
			for _, id := range prev {
				checkDescends(t, md, id, cur.SnapshotID, ops, fmt.Sprintf("round %d load %d", round, i))
			}
			ids = append(ids, cur.SnapshotID)
			handedOut[cur.SnapshotID] = true
		}
		// The three snapshots of this round are on one chain: the newest
		// descends from the other two.
		newest := slices.MaxFunc(tbls, func(a, b *table.Table) int {
			return int(a.Metadata().CurrentSnapshot().SequenceNumber - b.Metadata().CurrentSnapshot().SequenceNumber)
		})
		for _, id := range ids {
			checkDescends(t, newest.Metadata(), id, newest.Metadata().CurrentSnapshot().SnapshotID, ops, fmt.Sprintf("round %d", round))
		}
		prev = ids

		tbl := tbls[round%len(tbls)]
		tasks, err := tbl.Scan().PlanFiles(ctx)
		require.NoError(t, err)
		ranges := map[int32][][2]int64{}
		for _, task := range tasks {
			ref, ok := tables.ParseDataFileKey(tables.Key(task.File.FilePath()))
			require.True(t, ok, task.File.FilePath())
			ranges[ref.Partition] = append(ranges[ref.Partition], [2]int64{ref.Start, ref.End})
		}
		for part := int32(0); part < partitions; part++ {
			rs := ranges[part]
			slices.SortFunc(rs, func(a, b [2]int64) int { return int(a[0] - b[0]) })
			end := int64(0)
			for _, r := range rs {
				require.Equal(t, end, r[0], "round %d partition %d: files %v leave a gap or overlap", round, part, rs)
				end = r[1]
			}
			require.GreaterOrEqual(t, end, next[part], "round %d partition %d: acknowledged offsets missing from the load (files %v)", round, part, rs)
			// Assembly (§4.6) keeps the files of a partition few: one
			// assembled file, the indexed files and the tail files of the
			// last assembly interval (7.5 s here). Without it they grow
			// by one per flush interval and load (hundreds by the end).
			maxFiles = max(maxFiles, len(rs))
			require.LessOrEqual(t, len(rs), maxFilesPerPartition, "round %d partition %d: files %v", round, part, rs)
		}
		if round%100 == 99 {
			t.Logf("round %d at %v: last loads %v, %d files planned, %d snapshots in the metadata", round+1,
				time.Since(began).Round(time.Second), durs, len(tasks), len(tbl.Metadata().Snapshots()))
		}
		if round%250 == 249 || round == rounds-1 {
			got := readRecords(t, tbl, fmt.Sprintf("round %d", round))
			for k, v := range produced {
				require.Equal(t, v, got[k], "round %d: record %v", round, k)
			}
			require.Len(t, got, len(produced), "round %d: rows that were not produced", round)
		}
	}
	slices.Sort(lat)
	var loadSnapshots, files float64
	for _, n := range env.Nodes {
		loadSnapshots += metricValue(t, n.URL(), `mink_load_snapshots_total`)
		files += metricValue(t, n.URL(), `mink_tail_files_total`)
	}
	t.Logf("%d rounds, %d loads: %d distinct snapshots handed out, %.0f committed by loads (%.0f tail files); snapshots walked by operation %v; load latency p50 %v p99 %v; at most %d files per partition",
		rounds, len(lat), len(handedOut), loadSnapshots, files, ops, lat[len(lat)/2], lat[len(lat)*99/100], maxFiles)
	require.Positive(t, loadSnapshots, "loads committed tail snapshots")
	require.Positive(t, ops["replace"], "the writer replaced tail files")
}

// maxFilesPerPartition bounds the data files of a partition that
// TestZeroLagLineage plans at any round (with assembly, docs/design.md §4.6).
const maxFilesPerPartition = 40

// readRecords reads every row of the loaded table tbl and returns its
// values by partition and offset; a row seen twice fails the test.
func readRecords(t *testing.T, tbl *table.Table, what string) map[pk]string {
	t.Helper()
	at, err := tbl.Scan().ToArrowTable(context.Background())
	require.NoError(t, err)
	defer at.Release()
	got := map[pk]string{}
	clustertest.EachRow(t, at, func(p int32, o int64, v []byte) {
		k := pk{p, o}
		_, dup := got[k]
		require.False(t, dup, "%s: %v twice", what, k)
		got[k] = string(v)
	})
	return got
}

func catalogs(t *testing.T, env *devenv.Env) []*rest.Catalog {
	t.Helper()
	cats := make([]*rest.Catalog, len(env.Nodes))
	for i, n := range env.Nodes {
		var err error
		cats[i], err = rest.NewCatalog(context.Background(), "mink", n.URL())
		require.NoError(t, err)
	}
	return cats
}

// checkDescends checks, in md, that snapshot from is an ancestor of (or is)
// snapshot to: the walk from to through parents reaches from without a
// missing snapshot, each step one sequence number up; the snapshot-log
// lists from no later than to; appends on the way add exactly the records
// the totals grew by, and replaces keep the records. It counts the
// operations walked in ops.
func checkDescends(t *testing.T, md table.Metadata, from, to int64, ops map[string]int, what string) {
	t.Helper()
	if from == to {
		return
	}
	target := md.SnapshotByID(from)
	require.NotNil(t, target, "%s: snapshot %d handed out before is not in the metadata (%d snapshots)", what, from, len(md.Snapshots()))
	total := func(s *table.Snapshot) int64 {
		n, err := strconv.ParseInt(s.Summary.Properties["total-records"], 10, 64)
		require.NoError(t, err)
		return n
	}
	var appended int64
	s := md.SnapshotByID(to)
	for s.SnapshotID != from {
		require.NotNil(t, s.ParentSnapshotID, "%s: %d has no parent before reaching %d", what, s.SnapshotID, from)
		parent := md.SnapshotByID(*s.ParentSnapshotID)
		require.NotNil(t, parent, "%s: parent %d of %d is missing from the metadata", what, *s.ParentSnapshotID, s.SnapshotID)
		require.Equal(t, parent.SequenceNumber+1, s.SequenceNumber, "%s: snapshot %d", what, s.SnapshotID)
		props := s.Summary.Properties
		op := string(s.Summary.Operation)
		ops[op]++
		switch op {
		case "append":
			n, err := strconv.ParseInt(props["added-records"], 10, 64)
			require.NoError(t, err)
			appended += n
		case "replace":
			require.Equal(t, props["deleted-records"], props["added-records"], "%s: replace %d changes the rows", what, s.SnapshotID)
		default:
			t.Fatalf("%s: snapshot %d is a %s", what, s.SnapshotID, op)
		}
		require.Equal(t, total(s), total(parent)+func() int64 {
			if op == "append" {
				n, _ := strconv.ParseInt(props["added-records"], 10, 64)
				return n
			}
			return 0
		}(), "%s: totals of %d", what, s.SnapshotID)
		s = parent
	}
	require.Equal(t, total(md.SnapshotByID(to))-total(target), appended, "%s: appends between %d and %d", what, from, to)
	posFrom, posTo := -1, -1
	i := 0
	for e := range md.SnapshotLogs() {
		switch e.SnapshotID {
		case from:
			posFrom = i
		case to:
			posTo = i
		}
		i++
	}
	require.True(t, posFrom >= 0 && posTo > posFrom, "%s: snapshot-log lists %d at %d and %d at %d", what, from, posFrom, to, posTo)
}

// metricValue returns the value of one series of a node's /metrics, or 0.
func metricValue(t *testing.T, nodeURL, series string) float64 {
	t.Helper()
	v, err := proc.Metrics(context.Background(), nodeURL+"/metrics", series)
	require.NoError(t, err)
	return v[0]
}

// TestZeroLagLineageDeadLetters: the same lineage for a json table and its
// dead-letter table, each its own chain: rounds produce good and
// undecodable records, then load both tables through the three nodes at
// once. Each load holds exactly the good (or the bad) records produced so
// far, and the snapshots of the round before are ancestors.
func TestZeroLagLineageDeadLetters(t *testing.T) {
	ctx := context.Background()
	env, err := devenv.StartEnv(ctx, devenv.DevConfig{Nodes: 3, PostgresURL: pgtest.Schema(t), EphemeralPorts: true,
		LeaseTTL: 3 * time.Second, FlushInterval: time.Second, CommitInterval: 700 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(env.Stop)
	createTable(t, env, 2, map[string]any{
		"namespace": "zl", "name": "quakes", "topic": "dl", "value_format": "json",
		"schema": json.RawMessage(devenv.EarthquakesSchema)})
	cl, err := kgo.NewClient(kgo.SeedBrokers(env.Brokers...))
	require.NoError(t, err)
	defer cl.Close()
	cats := catalogs(t, env)
	names := []string{"quakes", "quakes~dlq"}
	counts := map[string]int{}
	prev := map[string][]int64{}
	ops := map[string]int{}
	rng := rand.New(rand.NewPCG(3, 5))
	for round := 0; round < 150; round++ {
		var recs []*kgo.Record
		for i := 0; i < 1+rng.IntN(4); i++ {
			v := fmt.Sprintf(`{"id":"r%d-%d","properties":{"mag":%d,"time":1700000000000}}`, round, i, i)
			name := "quakes"
			if rng.IntN(3) == 0 {
				v, name = fmt.Sprintf(`{"id":"r%d-%d","properties":{"mag":"strong"}}`, round, i), "quakes~dlq"
			}
			recs = append(recs, &kgo.Record{Topic: "dl", Value: []byte(v)})
			counts[name]++
		}
		require.NoError(t, cl.ProduceSync(ctx, recs...).FirstErr())
		type load struct {
			name string
			tbl  *table.Table
			err  error
		}
		loads := make([]load, 2*len(cats))
		var wg sync.WaitGroup
		for i := range loads {
			wg.Add(1)
			go func() {
				defer wg.Done()
				l := &loads[i]
				l.name = names[i%2]
				l.tbl, l.err = cats[i/2].LoadTable(ctx, table.Identifier{"zl", l.name})
			}()
		}
		wg.Wait()
		ids := map[string][]int64{}
		for i, l := range loads {
			require.NoError(t, l.err, "round %d load %d", round, i)
			md := l.tbl.Metadata()
			cur := md.CurrentSnapshot()
			require.NotNil(t, cur, "round %d %s", round, l.name)
			require.Equal(t, strconv.Itoa(counts[l.name]), cur.Summary.Properties["total-records"], "round %d %s", round, l.name)
			for _, id := range prev[l.name] {
				checkDescends(t, md, id, cur.SnapshotID, ops, fmt.Sprintf("round %d %s", round, l.name))
			}
			ids[l.name] = append(ids[l.name], cur.SnapshotID)
		}
		prev = ids
	}
	t.Logf("%v records; snapshots walked by operation %v", counts, ops)
	require.Positive(t, ops["replace"], "the writer replaced tail files")
}

// TestZeroLagUnderContinuousProduce: a producer writes 2,000 records/s to
// six partitions while 50 loads a second go to the three nodes in turn,
// each load racing the others' commits, the indexers and the writer (node
// defaults). Every load holds at least the records acknowledged before it
// started and at most those produced before it ended; in the metadata each
// load returns, the whole retained history is one chain of appends and
// replaces (a replace adds the records it removes, an append's totals add
// up); and once producing stops, a last load holds exactly what was
// produced, each record once, read with iceberg-go.
func TestZeroLagUnderContinuousProduce(t *testing.T) {
	ctx := context.Background()
	env, err := devenv.StartEnv(ctx, devenv.DevConfig{Nodes: 3, PostgresURL: pgtest.Schema(t), EphemeralPorts: true,
		LeaseTTL: 3 * time.Second})
	require.NoError(t, err)
	t.Cleanup(env.Stop)
	const partitions = 6
	createTable(t, env, partitions, map[string]any{
		"namespace": "zl", "name": "cp", "topic": "cp", "value_format": "raw"})
	cl, err := kgo.NewClient(kgo.SeedBrokers(env.Brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(2*time.Millisecond))
	require.NoError(t, err)
	defer cl.Close()
	cats := catalogs(t, env)

	var (
		mu       sync.Mutex
		produced = map[pk]string{}
		sent     atomic.Int64
	)
	pctx, stopProducing := context.WithCancel(ctx)
	var pwg sync.WaitGroup
	pwg.Add(1)
	go func() {
		defer pwg.Done()
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for n := 0; pctx.Err() == nil; {
			<-tick.C
			for i := 0; i < 20; i++ {
				sent.Add(1)
				cl.Produce(ctx, &kgo.Record{Topic: "cp", Partition: int32(n % partitions), Value: []byte(strconv.Itoa(n))},
					func(r *kgo.Record, err error) {
						if err == nil {
							mu.Lock()
							produced[pk{r.Partition, r.Offset}] = string(r.Value)
							mu.Unlock()
						}
					})
				n++
			}
		}
	}()

	type load struct {
		ackedBefore, sentAfter int64
		md                     table.Metadata
		err                    error
	}
	var loads []*load
	var lwg sync.WaitGroup
	tick := time.NewTicker(20 * time.Millisecond)
	for i := 0; i < 1000; i++ { // 20 s
		<-tick.C
		l := &load{}
		loads = append(loads, l)
		mu.Lock()
		l.ackedBefore = int64(len(produced))
		mu.Unlock()
		lwg.Add(1)
		go func() {
			defer lwg.Done()
			tbl, err := cats[i%len(cats)].LoadTable(ctx, table.Identifier{"zl", "cp"})
			l.sentAfter = sent.Load()
			if l.err = err; err == nil {
				l.md = tbl.Metadata()
			}
		}()
	}
	tick.Stop()
	lwg.Wait()
	stopProducing()
	pwg.Wait()
	require.NoError(t, cl.Flush(ctx))

	ops := map[string]int{}
	for i, l := range loads {
		require.NoError(t, l.err, "load %d", i)
		cur := l.md.CurrentSnapshot()
		if cur == nil { // a load before the first record: the table has no snapshot yet
			require.Zero(t, l.ackedBefore, "load %d: no snapshot, but records were acknowledged before it", i)
			continue
		}
		total, err := strconv.ParseInt(cur.Summary.Properties["total-records"], 10, 64)
		require.NoError(t, err)
		require.GreaterOrEqual(t, total, l.ackedBefore, "load %d: records acknowledged before it are missing", i)
		require.LessOrEqual(t, total, l.sentAfter, "load %d: more rows than records produced", i)
		// The whole retained history is one chain down to its oldest snapshot.
		oldest := cur
		for oldest.ParentSnapshotID != nil && l.md.SnapshotByID(*oldest.ParentSnapshotID) != nil {
			oldest = l.md.SnapshotByID(*oldest.ParentSnapshotID)
		}
		checkDescends(t, l.md, oldest.SnapshotID, cur.SnapshotID, ops, fmt.Sprintf("load %d", i))
		require.Len(t, l.md.Snapshots(), int(cur.SequenceNumber-oldest.SequenceNumber+1),
			"load %d: the retained snapshots are exactly that chain", i)
	}

	// Producing stopped: a last load holds exactly what was produced.
	mu.Lock()
	want := maps.Clone(produced)
	mu.Unlock()
	tbl, err := cats[0].LoadTable(ctx, table.Identifier{"zl", "cp"})
	require.NoError(t, err)
	require.Equal(t, strconv.Itoa(len(want)), tbl.Metadata().CurrentSnapshot().Summary.Properties["total-records"])
	require.Equal(t, want, readRecords(t, tbl, "last load"))
	t.Logf("%d records, %d loads; snapshots walked by operation %v", len(want), len(loads), ops)
	require.Positive(t, ops["replace"], "the writer replaced tail files")
}
