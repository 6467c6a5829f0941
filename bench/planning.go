package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/minkhq/mink/auth"
	"github.com/minkhq/mink/cluster"
	"github.com/minkhq/mink/internal/synthtable"
	"github.com/minkhq/mink/node"
	"github.com/minkhq/mink/pgstore"
)

func init() {
	register(Scenario{
		Name:  "planning",
		Title: "Scan planning: server-side from Postgres against client-side from manifests",
		About: `A synthetic table of 100,000 data files (internal/synthtable: 4 partitions,
100 offsets per file, statistics on every _kafka column and the string value,
committed as 10 append snapshots of 10,000 files each, so its manifests are
what the writer would have written) is served by one Mink node (role server,
real PostgreSQL, in-process kfake for the topic). iceberg-go v0.7 loads the
table through the REST catalog once per run, then plans a scan twice each
way: server-side (table.ScanPlanningRemote: POST …/plan, which plans from
the data file rows in Postgres, and for the unfiltered scan 100 plan tasks
of 1,000 files fetched with POST …/tasks) and client-side (the default:
the manifest list and the manifests read through Mink's S3 API and
evaluated by iceberg-go). Filters: a selective one on _kafka.offset
(100 offsets: one file per partition) and none (every file). Time of
Scan.PlanFiles, wall clock. The node counts a snapshot's file and record
totals from the rows once (to check them against the snapshot summary
before trusting the rows) and keeps them: the first server-side plan of a
run's first snapshot pays that count (run 1's offset-filter sample), the
others do not. Other helpers' tests shared the 2 cores: the figures are
upper bounds, noisy.`,
		Run: runPlanning,
	})
}

func runPlanning(ctx context.Context, h *H) error {
	files := ifQuick(h, 100_000, 10_000)
	pg, err := h.Postgres(ctx)
	if err != nil {
		return err
	}
	dir, err := h.TempDir()
	if err != nil {
		return err
	}
	pool, err := pgstore.Open(ctx, pgstore.Config{URL: pg})
	if err != nil {
		return err
	}
	defer pool.Close()
	start := time.Now()
	o := synthtable.Options{Namespace: "bench", Name: "events", Files: files, FilesPerCommit: 10_000}
	if _, err := synthtable.Create(ctx, pool, o); err != nil {
		return err
	}
	h.Logf("synthetic table of %d files in %v", files, time.Since(start).Round(time.Millisecond))

	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(4, "events"))
	if err != nil {
		return err
	}
	defer kc.Close()
	n, err := node.Start(ctx, node.Config{
		PostgresURL: pg, KafkaBrokers: kc.ListenAddrs(), Listen: "127.0.0.1:0", NodeID: "planning-1",
		Roles: []string{cluster.RoleServer}, Auth: auth.ModeNone, Warehouse: "mink", LeaseTTL: 10 * time.Second,
		CacheDir: filepath.Join(dir, "cache"), Logger: frQuietLogger(),
	})
	if err != nil {
		return err
	}
	defer n.Stop()

	perPartition := int64(files/4) * 100
	lo := perPartition / 2
	selective := iceberg.NewAnd(
		iceberg.GreaterThanEqual(iceberg.Reference("_kafka.offset"), lo),
		iceberg.LessThan(iceberg.Reference("_kafka.offset"), lo+100))
	cases := []struct {
		name   string
		filter iceberg.BooleanExpression
		want   int
	}{{"offset filter", selective, 4}, {"no filter", iceberg.AlwaysTrue{}, files}}
	for _, c := range cases {
		h.Figure(Figure{Name: c.name + ": client-side", Unit: "ms",
			Note: "iceberg-go reads the manifest list and manifests through the S3 API"})
		h.Figure(Figure{Name: c.name + ": server-side", Unit: "ms", Ref: c.name + ": client-side",
			Note: fmt.Sprintf("POST …/plan (and …/tasks); %d files planned", c.want)})
	}
	cat, err := rest.NewCatalog(ctx, "mink", n.URL())
	if err != nil {
		return err
	}
	defer cat.Close()
	for run := 0; run < h.Runs; run++ {
		tbl, err := cat.LoadTable(ctx, table.Identifier{"bench", "events"})
		if err != nil {
			return err
		}
		for _, c := range cases {
			for _, mode := range []table.ScanPlanningMode{table.ScanPlanningLocal, table.ScanPlanningRemote} {
				scan := tbl.Scan(table.WithScanPlanningMode(mode), table.WithRowFilter(c.filter))
				t0 := time.Now()
				tasks, err := scan.PlanFiles(ctx)
				took := time.Since(t0)
				scan.Close()
				if err != nil {
					return fmt.Errorf("%s, %s: %w", c.name, mode, err)
				}
				if len(tasks) != c.want {
					return fmt.Errorf("%s, %s: %d files planned, want %d", c.name, mode, len(tasks), c.want)
				}
				side := "client-side"
				if mode == table.ScanPlanningRemote {
					side = "server-side"
				}
				h.Add(c.name+": "+side, float64(took.Microseconds())/1000)
			}
		}
	}
	return nil
}
