package catalog_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog/rest"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/catalog"
	"github.com/minkhq/mink/datafile"
	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/internal/synthtable"
	"github.com/minkhq/mink/tables"
)

// planFixture is a catalog over synthetic tables, counting the requests
// it answers by "METHOD last-path-segment".
type planFixture struct {
	pool *pgxpool.Pool
	url  string

	mu    sync.Mutex
	calls map[string]int
}

func newPlanFixture(t *testing.T, cfg catalog.Config) *planFixture {
	t.Helper()
	pool, _ := pgtest.Pool(t)
	if cfg.AdvertiseURL == "" {
		cfg.AdvertiseURL = advertise
	}
	h, err := catalog.New(cfg, pool)
	require.NoError(t, err)
	f := &planFixture{pool: pool, calls: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.calls[r.Method+" "+r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:]]++
		f.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	f.url = srv.URL
	return f
}

func (f *planFixture) count(call string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[call]
}

// synthOptions: 4 partitions × 10 files of 100 offsets each, the last 6
// tail files of a zero-lag load.
var synthOptions = synthtable.Options{Namespace: "synth", Name: "events", Files: 40, FilesPerCommit: 15, TailFiles: 6}

func (f *planFixture) synth(t *testing.T, o synthtable.Options) *tables.Table {
	t.Helper()
	tbl, err := synthtable.Create(context.Background(), f.pool, o)
	require.NoError(t, err)
	return tbl
}

// plannedFile is what the tests compare of a planned file.
type plannedFile struct {
	Path    string
	Records int64
	Size    int64
}

func filesOf(tasks []table.FileScanTask) []plannedFile {
	var out []plannedFile
	for _, task := range tasks {
		out = append(out, plannedFile{task.File.FilePath(), task.File.Count(), task.File.FileSizeBytes()})
	}
	slices.SortFunc(out, func(a, b plannedFile) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// remotePlan plans through iceberg-go's REST client, server-side.
func (f *planFixture) remotePlan(t *testing.T, ident table.Identifier, filter iceberg.BooleanExpression) []plannedFile {
	t.Helper()
	ctx := context.Background()
	cat, err := rest.NewCatalog(ctx, "mink", f.url)
	require.NoError(t, err)
	tbl, err := cat.LoadTable(ctx, ident)
	require.NoError(t, err)
	scan := tbl.Scan(table.WithScanPlanningMode(table.ScanPlanningRemote), table.WithRowFilter(filter))
	defer scan.Close()
	tasks, err := scan.PlanFiles(ctx)
	require.NoError(t, err)
	return filesOf(tasks)
}

// localPlan plans with iceberg-go over the manifests (client-side), read
// from the metadata files in Postgres.
func (f *planFixture) localPlan(t *testing.T, tbl *tables.Table, filter iceberg.BooleanExpression) []plannedFile {
	t.Helper()
	ctx := context.Background()
	fs := iceio.NewMemFS()
	rows, err := f.pool.Query(ctx, `SELECT path, content FROM metadata_files WHERE table_id = $1`, tbl.ID)
	require.NoError(t, err)
	for rows.Next() {
		var key string
		var content []byte
		require.NoError(t, rows.Scan(&key, &content))
		require.NoError(t, fs.WriteFile(tbl.WarehouseLocation()+key, content))
	}
	require.NoError(t, rows.Err())
	cur, err := tables.Get(ctx, f.pool, tbl.ID)
	require.NoError(t, err)
	var b []byte
	require.NoError(t, f.pool.QueryRow(ctx, `SELECT content FROM metadata_files WHERE path = $1`,
		tables.Key(cur.MetadataLocation)).Scan(&b))
	md, err := table.ParseMetadataBytes(b)
	require.NoError(t, err)
	it := table.New(table.Identifier{tbl.Namespace, tbl.Name}, md, cur.MetadataLocation,
		func(context.Context) (iceio.IO, error) { return fs, nil }, nil)
	scan := it.Scan(table.WithRowFilter(filter))
	defer scan.Close()
	tasks, err := scan.PlanFiles(ctx)
	require.NoError(t, err)
	return filesOf(tasks)
}

// expected lists the synthetic files keep selects, by their bounds.
func expected(t *testing.T, tbl *tables.Table, o synthtable.Options, keep func(p int32, start, end int64) bool) []plannedFile {
	t.Helper()
	vf, ok := tbl.Schema.FindFieldByName("value")
	require.True(t, ok)
	var out []plannedFile
	for i := range o.Files {
		p, start, end, st := synthtable.File(o, vf.ID, i)
		if keep(p, start, end) {
			out = append(out, plannedFile{tbl.WarehouseLocation() + tbl.DataFileKey(p, start, end, datafile.EncoderVersion), st.RecordCount, 2000})
		}
	}
	slices.SortFunc(out, func(a, b plannedFile) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// A filter on _kafka.offset and one on a value column return exactly the
// files whose statistics may match, the same as iceberg-go's own planning
// over the manifests.
func TestPlanTableScan(t *testing.T) {
	f := newPlanFixture(t, catalog.Config{})
	tbl := f.synth(t, synthOptions)
	ident := table.Identifier{"synth", "events"}
	for _, c := range []struct {
		name   string
		filter iceberg.BooleanExpression
		keep   func(p int32, start, end int64) bool
	}{
		{"none", iceberg.AlwaysTrue{}, func(int32, int64, int64) bool { return true }},
		{"offset range", iceberg.NewAnd(
			iceberg.GreaterThanEqual(iceberg.Reference("_kafka.offset"), int64(250)),
			iceberg.LessThan(iceberg.Reference("_kafka.offset"), int64(350))),
			func(_ int32, s, e int64) bool { return s < 350 && e > 250 }},
		{"offset and partition", iceberg.NewAnd(
			iceberg.EqualTo(iceberg.Reference("_kafka.partition"), int32(2)),
			iceberg.LessThan(iceberg.Reference("_kafka.offset"), int64(100))),
			func(p int32, s, _ int64) bool { return p == 2 && s < 100 }},
		{"offset in", iceberg.IsIn(iceberg.Reference("_kafka.offset"), int64(5), int64(905)),
			func(_ int32, s, _ int64) bool { return s == 0 || s == 900 }},
		{"value", iceberg.EqualTo(iceberg.Reference("value"), synthtable.Value(1, 555)),
			func(p int32, s, _ int64) bool { return p == 1 && s == 500 }},
		{"value range or offset", iceberg.NewOr(
			iceberg.StartsWith(iceberg.Reference("value"), "03-0000000007"),
			iceberg.GreaterThan(iceberg.Reference("_kafka.offset"), int64(950))),
			func(p int32, s, _ int64) bool { return p == 3 && s == 700 || s == 900 }},
		{"not", iceberg.NewNot(iceberg.GreaterThanEqual(iceberg.Reference("_kafka.offset"), int64(100))),
			func(_ int32, s, _ int64) bool { return s == 0 }},
		{"nothing", iceberg.GreaterThan(iceberg.Reference("_kafka.offset"), int64(5000)),
			func(int32, int64, int64) bool { return false }},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := expected(t, tbl, synthOptions, c.keep)
			got := f.remotePlan(t, ident, c.filter)
			require.Equal(t, want, got)
			require.Equal(t, f.localPlan(t, tbl, c.filter), got)
		})
	}
	require.Equal(t, 8, f.count("POST plan"), "iceberg-go planned through the catalog")

	// From the rows, tail files included: the plan id says so.
	rsp, body := post(t, f.url+"/v1/namespaces/synth/tables/events/plan", `{}`)
	require.Equal(t, http.StatusOK, rsp.StatusCode, string(body))
	id, err := base64.RawURLEncoding.DecodeString(decode[struct {
		PlanID string `json:"plan-id"`
	}](t, body).PlanID)
	require.NoError(t, err)
	require.NotContains(t, string(id), `"m":true`)
	var tails int
	require.NoError(t, f.pool.QueryRow(context.Background(),
		`SELECT count(*) FROM tail_files WHERE table_id = $1`, tbl.ID).Scan(&tails))
	require.Equal(t, 6, tails)
}

// A plan of more than PlanTaskFiles files answers plan tasks; iceberg-go
// fetches each and gets every file once. Tokens of another table, or none
// of ours, answer the spec's 404.
func TestPlanTasks(t *testing.T) {
	f := newPlanFixture(t, catalog.Config{PlanTaskFiles: 7})
	tbl := f.synth(t, synthOptions)
	other := f.synth(t, synthtable.Options{Namespace: "synth", Name: "other", Files: 3})
	ident := table.Identifier{"synth", "events"}

	got := f.remotePlan(t, ident, iceberg.AlwaysTrue{})
	require.Equal(t, expected(t, tbl, synthOptions, func(int32, int64, int64) bool { return true }), got)
	require.Equal(t, 6, f.count("POST tasks"), "40 files in tasks of 7")

	filter := iceberg.GreaterThanEqual(iceberg.Reference("_kafka.offset"), int64(700))
	got = f.remotePlan(t, ident, filter)
	require.Len(t, got, 12)
	require.Equal(t, f.localPlan(t, tbl, filter), got)
	require.Equal(t, 8, f.count("POST tasks"), "12 files in tasks of 7")

	// The plan id and the tokens, by hand.
	rsp, body := post(t, f.url+"/v1/namespaces/synth/tables/events/plan", `{}`)
	require.Equal(t, http.StatusOK, rsp.StatusCode, string(body))
	plan := decode[struct {
		Status    string   `json:"status"`
		PlanID    string   `json:"plan-id"`
		PlanTasks []string `json:"plan-tasks"`
	}](t, body)
	require.Equal(t, "completed", plan.Status)
	require.Len(t, plan.PlanTasks, 6)

	rsp, body = post(t, f.url+"/v1/namespaces/synth/tables/events/tasks", `{"plan-task":"`+plan.PlanTasks[5]+`"}`)
	require.Equal(t, http.StatusOK, rsp.StatusCode, string(body))
	last := decode[struct {
		Tasks []struct {
			DataFile struct {
				Path string `json:"file-path"`
			} `json:"data-file"`
		} `json:"file-scan-tasks"`
	}](t, body)
	require.Len(t, last.Tasks, 5)
	require.Equal(t, got[len(got)-1].Path, last.Tasks[4].DataFile.Path)

	rsp, body = do(t, "GET", f.url+"/v1/namespaces/synth/tables/events/plan/"+plan.PlanID)
	require.Equal(t, http.StatusOK, rsp.StatusCode, string(body))
	again := decode[struct {
		Status    string   `json:"status"`
		PlanID    *string  `json:"plan-id"`
		PlanTasks []string `json:"plan-tasks"`
	}](t, body)
	require.Equal(t, "completed", again.Status)
	require.Nil(t, again.PlanID, "fetchPlanningResult has no plan-id")
	require.Len(t, again.PlanTasks, 6)
	rsp, _ = do(t, "DELETE", f.url+"/v1/namespaces/synth/tables/events/plan/"+plan.PlanID)
	require.Equal(t, http.StatusNoContent, rsp.StatusCode)

	for _, tok := range []string{"nope", plan.PlanID} {
		rsp, body = post(t, f.url+"/v1/namespaces/synth/tables/other/tasks", `{"plan-task":"`+tok+`"}`)
		requireError(t, rsp, body, http.StatusNotFound, "NoSuchPlanTaskException")
	}
	rsp, body = post(t, f.url+"/v1/namespaces/synth/tables/other/tasks", `{"plan-task":"`+plan.PlanTasks[0]+`"}`)
	requireError(t, rsp, body, http.StatusNotFound, "NoSuchPlanTaskException")
	for _, m := range []string{"GET", "DELETE"} {
		rsp, body = do(t, m, f.url+"/v1/namespaces/synth/tables/other/plan/"+plan.PlanID)
		requireError(t, rsp, body, http.StatusNotFound, "NoSuchPlanIdException")
		rsp, body = do(t, m, f.url+"/v1/namespaces/synth/tables/events/plan/x"+plan.PlanID)
		requireError(t, rsp, body, http.StatusNotFound, "NoSuchPlanIdException")
	}
	_ = other

	rsp, body = post(t, f.url+"/v1/namespaces/synth/tables/events/plan", `{"start-snapshot-id":1}`)
	requireError(t, rsp, body, http.StatusBadRequest, "BadRequestException")
	require.Contains(t, string(body), "Incremental scan planning")
	rsp, body = post(t, f.url+"/v1/namespaces/synth/tables/events/plan", `{"snapshot-id":42}`)
	requireError(t, rsp, body, http.StatusBadRequest, "BadRequestException")
	rsp, body = post(t, f.url+"/v1/namespaces/synth/tables/nope/plan", `{}`)
	requireError(t, rsp, body, http.StatusNotFound, "NoSuchTableException")
}

func post(t *testing.T, url, body string) (*http.Response, []byte) {
	t.Helper()
	rsp, err := http.Post(url, "application/json", strings.NewReader(body))
	require.NoError(t, err)
	defer rsp.Body.Close()
	b, err := io.ReadAll(rsp.Body)
	require.NoError(t, err)
	return rsp, b
}

// When the file rows do not add up to the snapshot's summary, the plan
// comes from the manifests, and is still exact.
func TestPlanFromManifestsWhenRowsDisagree(t *testing.T) {
	f := newPlanFixture(t, catalog.Config{})
	tbl := f.synth(t, synthOptions)
	_, err := f.pool.Exec(context.Background(),
		`DELETE FROM data_files WHERE table_id = $1 AND partition = 1 AND start_offset >= 300`, tbl.ID)
	require.NoError(t, err)
	ident := table.Identifier{"synth", "events"}
	for _, filter := range []iceberg.BooleanExpression{
		iceberg.AlwaysTrue{},
		iceberg.EqualTo(iceberg.Reference("value"), synthtable.Value(1, 555)),
	} {
		got := f.remotePlan(t, ident, filter)
		require.Equal(t, f.localPlan(t, tbl, filter), got)
		require.NotEmpty(t, got)
	}
	// Paged from the manifests too.
	g := newPlanFixture(t, catalog.Config{PlanTaskFiles: 9})
	tbl = g.synth(t, synthOptions)
	_, err = g.pool.Exec(context.Background(), `UPDATE data_files SET record_count = 1 WHERE table_id = $1`, tbl.ID)
	require.NoError(t, err)
	got := g.remotePlan(t, ident, iceberg.AlwaysTrue{})
	require.Len(t, got, 40)
	require.Equal(t, g.localPlan(t, tbl, iceberg.AlwaysTrue{}), got)
	require.Equal(t, 5, g.count("POST tasks"))
}

// Planning answers only what a table load would: a table outside the
// principal's grants is 404, as if missing; a granted one plans.
func TestPlanAccess(t *testing.T) {
	f := newAuthFixture(t)
	_, err := synthtable.Create(context.Background(), f.pool, synthtable.Options{Namespace: "a", Name: "p", Files: 4})
	require.NoError(t, err)
	_, err = synthtable.Create(context.Background(), f.pool, synthtable.Options{Namespace: "c", Name: "q", Files: 4})
	require.NoError(t, err)
	tok := f.token("reader", false, "a.*")
	planAs := func(path, body string) (*http.Response, []byte) {
		req, err := http.NewRequest("POST", f.url+path, bytes.NewReader([]byte(body)))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+tok)
		rsp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer rsp.Body.Close()
		b, err := io.ReadAll(rsp.Body)
		require.NoError(t, err)
		return rsp, b
	}
	rsp, body := planAs("/v1/namespaces/a/tables/p/plan", `{}`)
	require.Equal(t, http.StatusOK, rsp.StatusCode, string(body))
	plan := decode[struct {
		PlanID string `json:"plan-id"`
		Tasks  []any  `json:"file-scan-tasks"`
	}](t, body)
	require.Len(t, plan.Tasks, 4)

	rsp, body = planAs("/v1/namespaces/c/tables/q/plan", `{}`)
	requireError(t, rsp, body, http.StatusNotFound, "NoSuchTableException")
	rsp, body = planAs("/v1/namespaces/c/tables/q/tasks", `{"plan-task":"x"}`)
	requireError(t, rsp, body, http.StatusNotFound, "NoSuchTableException")
	rsp, body = f.as(tok, "GET", "/v1/namespaces/c/tables/q/plan/"+plan.PlanID)
	requireError(t, rsp, body, http.StatusNotFound, "NoSuchTableException")
	// Without a token: 401.
	rsp, body = post(t, f.url+"/v1/namespaces/a/tables/p/plan", `{}`)
	requireError(t, rsp, body, http.StatusUnauthorized, "NotAuthorizedException")
}

// A snapshot off the main branch (a tag's) is planned from its manifests:
// its rows' lineage is not main's.
func TestPlanTagFromManifests(t *testing.T) {
	f := newPlanFixture(t, catalog.Config{})
	tbl := f.synth(t, synthOptions)
	md := f.metadataJSON(t, tbl)
	head, err := md["current-snapshot-id"].(json.Number).Int64()
	require.NoError(t, err)
	var first int64
	for _, s := range md["snapshots"].([]any) {
		if _, ok := s.(map[string]any)["parent-snapshot-id"]; !ok {
			first, err = s.(map[string]any)["snapshot-id"].(json.Number).Int64()
			require.NoError(t, err)
		}
	}
	require.NotZero(t, first)
	// main moves back to the first snapshot; the old head stays as a tag,
	// never main's head (out of the snapshot-log), as a group tag's own
	// snapshot.
	md["current-snapshot-id"] = first
	var log []any
	for _, e := range md["snapshot-log"].([]any) {
		if id, _ := e.(map[string]any)["snapshot-id"].(json.Number).Int64(); id != head {
			log = append(log, e)
		}
	}
	md["snapshot-log"] = log
	md["refs"] = map[string]any{"main": map[string]any{"snapshot-id": first, "type": "branch"},
		"keep": map[string]any{"snapshot-id": head, "type": "tag"}}
	f.installMetadata(t, tbl, md, "99999-tag")

	rsp, body := post(t, f.url+"/v1/namespaces/synth/tables/events/plan", fmt.Sprintf(`{"snapshot-id":%d}`, head))
	require.Equal(t, http.StatusOK, rsp.StatusCode, string(body))
	plan := decode[struct {
		PlanID string `json:"plan-id"`
		Tasks  []any  `json:"file-scan-tasks"`
	}](t, body)
	id, err := base64.RawURLEncoding.DecodeString(plan.PlanID)
	require.NoError(t, err)
	require.Contains(t, string(id), `"m":true`, "planned from the manifests")
	require.Len(t, plan.Tasks, 40)
	// main's own snapshot still plans from the rows: 15 files.
	rsp, body = post(t, f.url+"/v1/namespaces/synth/tables/events/plan", `{}`)
	require.Equal(t, http.StatusOK, rsp.StatusCode, string(body))
	plan = decode[struct {
		PlanID string `json:"plan-id"`
		Tasks  []any  `json:"file-scan-tasks"`
	}](t, body)
	id, err = base64.RawURLEncoding.DecodeString(plan.PlanID)
	require.NoError(t, err)
	require.NotContains(t, string(id), `"m":true`)
	require.Len(t, plan.Tasks, 15)
}

// TestPlanAcrossThinnedHistory: thinning leaves gaps in main's parent
// chain (docs/design.md §4.6); the snapshots on both sides of a gap still
// plan from the rows, by sequence number, with exactly their files.
func TestPlanAcrossThinnedHistory(t *testing.T) {
	f := newPlanFixture(t, catalog.Config{})
	tbl := f.synth(t, synthOptions) // snapshots of 15, 30, 34 and 40 files
	md := f.metadataJSON(t, tbl)
	id := func(m map[string]any, k string) int64 {
		n, _ := m[k].(json.Number).Int64()
		return n
	}
	parent := map[int64]int64{}
	var first int64
	for _, s := range md["snapshots"].([]any) {
		s := s.(map[string]any)
		if _, ok := s["parent-snapshot-id"]; ok {
			parent[id(s, "snapshot-id")] = id(s, "parent-snapshot-id")
		} else {
			first = id(s, "snapshot-id")
		}
	}
	var second, third int64
	for c, p := range parent {
		if p == first {
			second = c
		}
	}
	for c, p := range parent {
		if p == second {
			third = c
		}
	}
	require.NotZero(t, third)
	// The second snapshot expires: the third's parent is gone.
	var snaps, log []any
	for _, s := range md["snapshots"].([]any) {
		if id(s.(map[string]any), "snapshot-id") != second {
			snaps = append(snaps, s)
		}
	}
	for _, e := range md["snapshot-log"].([]any) {
		if id(e.(map[string]any), "snapshot-id") != second {
			log = append(log, e)
		}
	}
	md["snapshots"], md["snapshot-log"] = snaps, log
	f.installMetadata(t, tbl, md, "99999-thinned")

	for snap, files := range map[int64]int{first: 15, third: 34} {
		rsp, body := post(t, f.url+"/v1/namespaces/synth/tables/events/plan", fmt.Sprintf(`{"snapshot-id":%d}`, snap))
		require.Equal(t, http.StatusOK, rsp.StatusCode, string(body))
		plan := decode[struct {
			PlanID string `json:"plan-id"`
			Tasks  []any  `json:"file-scan-tasks"`
		}](t, body)
		pid, err := base64.RawURLEncoding.DecodeString(plan.PlanID)
		require.NoError(t, err)
		require.NotContains(t, string(pid), `"m":true`, "snapshot %d planned from the rows", snap)
		require.Len(t, plan.Tasks, files, "snapshot %d", snap)
	}
}

// TestPlanCaseInsensitive: "case-sensitive": false binds the filter's
// names ignoring case (REST spec, PlanTableScanRequest); by default a name
// in the wrong case is a 400. A tasks request without its plan-task is a
// 400, not an unknown task.
func TestPlanCaseInsensitive(t *testing.T) {
	f := newPlanFixture(t, catalog.Config{})
	f.synth(t, synthOptions)
	url := f.url + "/v1/namespaces/synth/tables/events/plan"
	files := func(body string) int {
		rsp, b := post(t, url, body)
		require.Equal(t, http.StatusOK, rsp.StatusCode, string(b))
		return len(decode[struct {
			Tasks []any `json:"file-scan-tasks"`
		}](t, b).Tasks)
	}
	want := files(`{"filter":{"type":"lt","term":"_kafka.offset","value":200}}`)
	require.Positive(t, want)
	require.Less(t, want, 40)
	require.Equal(t, want, files(`{"case-sensitive":false,"filter":{"type":"lt","term":"_KAFKA.Offset","value":200}}`))
	rsp, b := post(t, url, `{"filter":{"type":"lt","term":"_KAFKA.Offset","value":200}}`)
	require.Equal(t, http.StatusBadRequest, rsp.StatusCode, string(b))
	require.Contains(t, string(b), `"type":"BadRequestException"`)

	rsp, b = post(t, f.url+"/v1/namespaces/synth/tables/events/tasks", `{}`)
	require.Equal(t, http.StatusBadRequest, rsp.StatusCode, string(b))
	require.Contains(t, string(b), "missing plan-task")
}

// A select naming a column the table lacks is a 400 BadRequestException
// (ErrorModel) that names it, as a strict server answers; names bind
// ignoring case only under case-sensitive false, and "*" and the spec's
// metadata columns are known. iceberg-go's own remote scans with a
// selection still plan.
func TestPlanSelectUnknownColumn(t *testing.T) {
	f := newPlanFixture(t, catalog.Config{})
	f.synth(t, synthOptions)
	url := f.url + "/v1/namespaces/synth/tables/events/plan"
	for _, body := range []string{`{"select":["_kafka.offset","value"]}`, `{"select":["_kafka"]}`,
		`{"select":["*","_file","_pos"]}`, `{"case-sensitive":false,"select":["_KAFKA.Offset","Value","_FILE"]}`} {
		rsp, b := post(t, url, body)
		require.Equal(t, http.StatusOK, rsp.StatusCode, "%s: %s", body, b)
	}
	for _, c := range []struct{ body, column string }{
		{`{"select":["value","nope"]}`, "nope"},
		{`{"select":["_kafka.nope"]}`, "_kafka.nope"},
		{`{"select":["_KAFKA.Offset"]}`, "_KAFKA.Offset"},
		{`{"case-sensitive":true,"select":["Value"]}`, "Value"},
		{`{"case-sensitive":false,"select":["value","Missing"]}`, "Missing"},
	} {
		rsp, b := post(t, url, c.body)
		require.Equal(t, http.StatusBadRequest, rsp.StatusCode, "%s: %s", c.body, b)
		e := decode[struct {
			Error struct {
				Message string `json:"message"`
				Type    string `json:"type"`
				Code    int    `json:"code"`
			} `json:"error"`
		}](t, b).Error
		require.Equal(t, "BadRequestException", e.Type, c.body)
		require.Equal(t, http.StatusBadRequest, e.Code, c.body)
		require.Equal(t, fmt.Sprintf("Cannot select column %q: table synth.events (schema 0) has no such column", c.column),
			e.Message, c.body)
	}

	// A null entry is not a column named "": a 400 saying entries are
	// strings.
	for _, body := range []string{`{"select":[null]}`, `{"select":["value",null]}`, `{"stats-fields":[null]}`} {
		rsp, b := post(t, url, body)
		require.Equal(t, http.StatusBadRequest, rsp.StatusCode, "%s: %s", body, b)
		require.Contains(t, string(b), "select and stats-fields entries must be strings (column names), not null", body)
		require.NotContains(t, string(b), `\"\"`, body)
	}
	// A null body is no PlanTableScanRequest (an object).
	rsp, b := post(t, url, `null`)
	require.Equal(t, http.StatusBadRequest, rsp.StatusCode, "%s", b)
	require.Contains(t, string(b), "Malformed PlanTableScanRequest: the body is null, not an object")
	// One JSON value, nothing after it (RFC 8259 §2).
	for _, body := range []string{`{}{}`, `{} x`, `{}]`} {
		rsp, b = post(t, url, body)
		require.Equal(t, http.StatusBadRequest, rsp.StatusCode, "%s: %s", body, b)
		require.Contains(t, string(b), "Malformed PlanTableScanRequest: unexpected data after the JSON value", body)
	}
	rsp, b = post(t, url, "{}\n\t ")
	require.Equal(t, http.StatusOK, rsp.StatusCode, "white space after the value: %s", b)
	rsp, b = post(t, url, `{"select":null,"stats-fields":null}`)
	require.Equal(t, http.StatusOK, rsp.StatusCode, "a null list is no list: %s", b)

	ctx := context.Background()
	cat, err := rest.NewCatalog(ctx, "mink", f.url)
	require.NoError(t, err)
	tbl, err := cat.LoadTable(ctx, table.Identifier{"synth", "events"})
	require.NoError(t, err)
	scan := tbl.Scan(table.WithScanPlanningMode(table.ScanPlanningRemote), table.WithSelectedFields("value", "_kafka.offset"))
	defer scan.Close()
	tasks, err := scan.PlanFiles(ctx)
	require.NoError(t, err)
	require.Len(t, tasks, synthOptions.Files)
}

// metadataJSON returns tbl's current metadata as JSON values (numbers kept
// whole: snapshot ids need all 64 bits).
func (f *planFixture) metadataJSON(t *testing.T, tbl *tables.Table) map[string]any {
	t.Helper()
	ctx := context.Background()
	cur, err := tables.Get(ctx, f.pool, tbl.ID)
	require.NoError(t, err)
	var content []byte
	require.NoError(t, f.pool.QueryRow(ctx, `SELECT content FROM metadata_files WHERE path = $1`,
		tables.Key(cur.MetadataLocation)).Scan(&content))
	var md map[string]any
	d := json.NewDecoder(bytes.NewReader(content))
	d.UseNumber()
	require.NoError(t, d.Decode(&md))
	return md
}

// installMetadata makes md tbl's current metadata, as metadata file name.
func (f *planFixture) installMetadata(t *testing.T, tbl *tables.Table, md map[string]any, name string) {
	t.Helper()
	ctx := context.Background()
	content, err := json.Marshal(md)
	require.NoError(t, err)
	loc := tbl.Location + "/metadata/" + name + ".metadata.json"
	_, err = f.pool.Exec(ctx, `INSERT INTO metadata_files (path, table_id, content) VALUES ($1, $2, $3)`,
		tables.Key(loc), tbl.ID, content)
	require.NoError(t, err)
	_, err = f.pool.Exec(ctx, `UPDATE tables SET metadata_location = $1 WHERE id = $2`, loc, tbl.ID)
	require.NoError(t, err)
}

// TestPlanConstantObjects: the spec's object forms of the constant
// expressions ({"type":"true"}, {"type":"false"}; Iceberg REST OpenAPI
// TrueExpression, FalseExpression) plan as the bare booleans do, where
// an expression may stand; iceberg-go's parser alone refuses them.
func TestPlanConstantObjects(t *testing.T) {
	f := newPlanFixture(t, catalog.Config{})
	f.synth(t, synthOptions)
	url := f.url + "/v1/namespaces/synth/tables/events/plan"
	paths := func(filter string) []string {
		t.Helper()
		rsp, b := post(t, url, `{"filter":`+filter+`}`)
		require.Equal(t, http.StatusOK, rsp.StatusCode, "%s: %s", filter, b)
		var out []string
		for _, task := range decode[struct {
			Tasks []struct {
				DataFile struct {
					Path string `json:"file-path"`
				} `json:"data-file"`
			} `json:"file-scan-tasks"`
		}](t, b).Tasks {
			out = append(out, task.DataFile.Path)
		}
		slices.Sort(out)
		return out
	}
	all, none := paths(`true`), paths(`false`)
	require.NotEmpty(t, all)
	require.Empty(t, none)
	lt := `{"type":"lt","term":"_kafka.offset","value":10}`
	some := paths(lt)
	require.NotEmpty(t, some)
	require.Less(t, len(some), len(all))
	for filter, want := range map[string][]string{
		`{"type":"true"}`:                                          all,
		`{"type":"false"}`:                                         none,
		`{"type":"not","child":{"type":"false"}}`:                  all,
		`{"type":"and","left":{"type":"true"},"right":` + lt + `}`: some,
		`{"type":"or","left":` + lt + `,"right":{"type":"false"}}`: some,
	} {
		require.Equal(t, want, paths(filter), filter)
	}
}
