package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/devenv"
	"github.com/minkhq/mink/internal/clustertest"
	"github.com/minkhq/mink/internal/pgtest"
)

// TestScanPlanning: iceberg-go v0.7's REST client plans through Mink's
// plan endpoint when asked to (table.ScanPlanningRemote, or auto: the
// catalog advertises every planning route), and gets the files its own
// planning over the manifests finds: filters on _kafka.offset and on the
// value column, exactly the matching files; no filter, every file,
// including the tail files a zero-lag load adds; and the planned files
// read back to exactly the records produced. A proxy in front of the
// catalog counts the planning requests, so the test knows the client
// planned remotely.
//
// iceberg-go 0.7 reading a Mink table with a row filter can panic inside
// arrow-go (client-side planning too), so filtered scans compare planned
// file sets (PlanFiles) and only the unfiltered scan reads rows.
func TestScanPlanning(t *testing.T) {
	ctx := context.Background()
	pg := pgtest.Schema(t)
	env, err := devenv.StartEnv(ctx, devenv.DevConfig{Nodes: 1, PostgresURL: pg, EphemeralPorts: true,
		LeaseTTL: 3 * time.Second, FlushInterval: 150 * time.Millisecond, CommitInterval: 300 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(env.Stop)
	const partitions = 2
	createTable(t, env, partitions, map[string]any{
		"namespace": "pl", "name": "events", "topic": "pl", "value_format": "string"})

	cl, err := kgo.NewClient(kgo.SeedBrokers(env.Brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer cl.Close()
	produced := 0
	produce := func(n int) {
		for i := 0; i < n; i++ {
			p := int32(produced % partitions)
			r := &kgo.Record{Topic: "pl", Partition: p, Value: fmt.Appendf(nil, "v%05d", produced)}
			require.NoError(t, cl.ProduceSync(ctx, r).FirstErr())
			produced++
		}
	}
	// Several ranges per partition: batches apart by more than the flush
	// interval.
	for range 6 {
		produce(40)
		time.Sleep(400 * time.Millisecond)
	}
	clustertest.WaitCaughtUp(t, env.Nodes[0].URL(), "pl.events")

	var plans, tasks atomic.Int64
	target, err := url.Parse(env.Nodes[0].URL())
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == "POST" && strings.HasSuffix(r.URL.Path, "/plan"):
			plans.Add(1)
		case r.Method == "POST" && strings.HasSuffix(r.URL.Path, "/tasks"):
			tasks.Add(1)
		}
		proxy.ServeHTTP(w, r)
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	cat, err := rest.NewCatalog(ctx, "mink", "http://"+ln.Addr().String())
	require.NoError(t, err)
	ident := table.Identifier{"pl", "events"}

	// The tail: records Kafka holds past the committed snapshot, which the
	// load adds as tail files (docs/design.md §4.4).
	produce(7)
	tbl, err := cat.LoadTable(ctx, ident)
	require.NoError(t, err)
	snap := tbl.CurrentSnapshot()
	require.NotNil(t, snap)
	require.Equal(t, fmt.Sprint(produced), snap.Summary.Properties["total-records"])

	plan := func(mode table.ScanPlanningMode, filter iceberg.BooleanExpression, opts ...table.ScanOption) []string {
		t.Helper()
		scan := tbl.Scan(append(opts, table.WithScanPlanningMode(mode), table.WithRowFilter(filter))...)
		defer scan.Close()
		fs, err := scan.PlanFiles(ctx)
		require.NoError(t, err)
		var out []string
		for _, f := range fs {
			out = append(out, fmt.Sprintf("%s %d", f.File.FilePath(), f.File.Count()))
		}
		slices.Sort(out)
		return out
	}
	at := table.WithSnapshotID(snap.SnapshotID)
	all := plan(table.ScanPlanningLocal, iceberg.AlwaysTrue{}, at)
	require.Greater(t, len(all), 2*partitions, "several files per partition")
	for _, filter := range []iceberg.BooleanExpression{
		iceberg.AlwaysTrue{},
		iceberg.GreaterThanEqual(iceberg.Reference("_kafka.offset"), int64(100)),
		iceberg.NewAnd(iceberg.EqualTo(iceberg.Reference("_kafka.partition"), int32(1)),
			iceberg.LessThan(iceberg.Reference("_kafka.offset"), int64(30))),
		iceberg.EqualTo(iceberg.Reference("value"), "v00123"),
		iceberg.GreaterThan(iceberg.Reference("value"), fmt.Sprintf("v%05d", produced-3)),
	} {
		local := plan(table.ScanPlanningLocal, filter, at)
		before := plans.Load()
		remote := plan(table.ScanPlanningRemote, filter, at)
		require.Equal(t, before+1, plans.Load(), "planned through the catalog")
		require.Equal(t, local, remote, filter.String())
		require.NotEmpty(t, remote, filter.String())
		if _, ok := filter.(iceberg.AlwaysTrue); !ok {
			require.Less(t, len(remote), len(all), filter.String())
		}
		// auto picks the server too: every planning route is advertised.
		require.Equal(t, local, plan(table.ScanPlanningAuto, filter, at))
		require.Equal(t, before+2, plans.Load())
	}
	require.Zero(t, tasks.Load(), "small plans answer their files inline")

	// Without a snapshot id the server plans what a load answers now: the
	// tail of records produced since included. When the writer commits the
	// new records before the load, there is no tail to plan: again.
	conn, err := pgx.Connect(ctx, pg)
	require.NoError(t, err)
	defer conn.Close(ctx)
	type planned struct {
		PlanID string `json:"plan-id"`
		Tasks  []struct {
			DataFile struct {
				Records int64 `json:"record-count"`
			} `json:"data-file"`
		} `json:"file-scan-tasks"`
	}
	var scan *table.Scan
	var raw planned
	for attempt := 1; ; attempt++ {
		produce(5)
		var records int64
		scan = tbl.Scan(table.WithScanPlanningMode(table.ScanPlanningRemote))
		fs, err := scan.PlanFiles(ctx)
		require.NoError(t, err)
		for _, f := range fs {
			records += f.File.Count()
		}
		require.EqualValues(t, produced, records, "every acknowledged record is planned")

		// The plan came from the file rows in Postgres (tail files
		// included), not from the manifests: the plan id says which.
		rsp, err := http.Post(env.Nodes[0].URL()+"/v1/namespaces/pl/tables/events/plan", "application/json", strings.NewReader(`{}`))
		require.NoError(t, err)
		raw = planned{}
		require.NoError(t, json.NewDecoder(rsp.Body).Decode(&raw))
		rsp.Body.Close()
		id, err := base64.RawURLEncoding.DecodeString(raw.PlanID)
		require.NoError(t, err)
		require.NotContains(t, string(id), `"m":true`, "planned from the rows")
		var tails int
		require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM tail_files`).Scan(&tails))
		if tails > 0 {
			break
		}
		require.Less(t, attempt, 5, "loads added tail files")
		scan.Close()
	}
	var records int64
	for _, task := range raw.Tasks {
		records += task.DataFile.Records
	}
	require.EqualValues(t, produced, records)

	// The remotely planned files read back to exactly what was produced.
	arrowTbl, err := scan.ToArrowTable(ctx)
	require.NoError(t, err)
	defer arrowTbl.Release()
	require.EqualValues(t, produced, arrowTbl.NumRows())
	scan.Close()
}
