package admin_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/minkhq/mink/admin"
	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/internal/testkit"
)

func TestTablesAPI(t *testing.T) {
	pool, _ := pgtest.Pool(t)
	k := testkit.NewKafka(t, kfake.SeedTopics(4, "events"))
	srv := httptest.NewServer(admin.New(pool, k.Client, admin.Config{NodeID: "n1", Warehouse: "mink"}))
	defer srv.Close()

	do := func(method, path, body string) (int, map[string]any) {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		require.NoError(t, err)
		resp, b := testkit.Send(t, req)
		var out map[string]any
		_ = json.Unmarshal(b, &out)
		return resp.StatusCode, out
	}

	code, body := do("POST", "/admin/v1/tables", `{"namespace":"app","name":"events","topic":"events","value_format":"string"}`)
	require.Equal(t, http.StatusCreated, code, body)
	require.Equal(t, "app", body["namespace"])
	require.Equal(t, "s3://mink/app/events", body["location"])

	bad := []struct {
		body string
		code int
		msg  string
	}{
		{`{"namespace":"app","name":"events","topic":"events","value_format":"string"}`, 409, "already exists"},
		{`{"namespace":"app","name":"x","topic":"nope","value_format":"string"}`, 404, "unknown topic"},
		{`{"namespace":"app","name":"x","topic":"events","value_format":"xml"}`, 400, `format "xml"`},
		{`{"namespace":"app","name":"x","topic":"events","value_format":"json"}`, 400, "schema"},
		{`{"namespace":"app","name":"x","topic":"events","value_format":"json","schema":{"type":"struct","fields":[{"id":1,"name":"a","type":"nonsense"}]}}`, 400, "schema"},
		{`{"namespace":"app","name":"a/b","topic":"events","value_format":"raw"}`, 400, "name"},
		{`{"namespace":"app","name":"x~dlq","topic":"events","value_format":"raw"}`, 400, "name"},
		{`{"namespace":"","name":"x","topic":"events","value_format":"raw"}`, 400, "namespace"},
		{`{"namespace":"app","name":"x","value_format":"raw"}`, 400, "topic"},
		{`{"namespace":"app","name":"x","topic":"events","value_format":"raw","start":"yesterday"}`, 400, "start"},
		{`{"namespace":"app","name":"x","topic":"events","value_format":"raw","colour":"red"}`, 400, "colour"},
		{`{"namespace":`, 400, "invalid"},
		{`{"namespace":"app","name":"y","topic":"events","value_format":"raw"} trailing`, 400, "after the JSON object"},
		{`{"namespace":"app","name":"y","topic":"events","value_format":"raw"}}`, 400, "after the JSON object"},
		{`{"namespace":"app","name":"y","topic":"events","value_format":"raw"}]`, 400, "after the JSON object"},
		{`{"namespace":"app","name":"y","topic":"events","value_format":"raw"} {}`, 400, "after the JSON object"},
		// Locations may not nest: a table of namespace app.events, or one
		// named data or metadata there, would lie in app.events's files
		// (s3://mink/app/events/…), and so would its vended credentials.
		{`{"namespace":"app.events","name":"sub","topic":"events","value_format":"raw"}`, 409, "table app.events's"},
		{`{"namespace":"app.events","name":"data","topic":"events","value_format":"raw"}`, 409, "a namespace cannot have the path of a table"},
		{`{"namespace":"app.events.deeper","name":"metadata","topic":"events","value_format":"raw"}`, 409, "table app.events's"},
	}
	for _, b := range bad {
		code, body := do("POST", "/admin/v1/tables", b.body)
		require.Equal(t, b.code, code, b.body)
		require.Contains(t, body["error"], b.msg, b.body)
	}

	// Names no table can have are a 400, not a failed query (500).
	for _, path := range []string{"/admin/v1/tables/app%00.events", "/admin/v1/tables/app.%FF", "/admin/v1/tables/app.events%00/status"} {
		code, body := do("GET", path, "")
		require.Equal(t, http.StatusBadRequest, code, "%s: %v", path, body)
	}

	// And the other way: a table whose location a created table's lies in.
	code, body = do("POST", "/admin/v1/tables", `{"namespace":"ns.a","name":"b","topic":"events","value_format":"raw"}`)
	require.Equal(t, http.StatusCreated, code, body)
	code, body = do("POST", "/admin/v1/tables", `{"namespace":"ns","name":"a","topic":"events","value_format":"raw"}`)
	require.Equal(t, http.StatusConflict, code, body)
	require.Contains(t, body["error"], "table ns.a.b's (s3://mink/ns/a/b)")
	code, body = do("POST", "/admin/v1/tables", `{"namespace":"ns","name":"a1","topic":"events","value_format":"raw"}`)
	require.Equal(t, http.StatusCreated, code, body) // a prefix of the string, not of the path
	for _, name := range []string{"ns.a.b", "ns.a1"} {
		code, body = do("DELETE", "/admin/v1/tables/"+name, "")
		require.Equal(t, http.StatusNoContent, code, body)
	}

	code, body = do("GET", "/admin/v1/tables/app.events/partitions", "")
	require.Equal(t, http.StatusOK, code)
	parts := body["partitions"].([]any)
	require.Len(t, parts, 4)
	p0 := parts[0].(map[string]any)
	require.EqualValues(t, 0, p0["indexed_offset"])
	require.EqualValues(t, 0, p0["high_watermark"])
	require.Nil(t, p0["holder"])

	// Table status: progress, unknown JSON fields (examples merged across
	// partitions, distinct, at most 10) and dead letters.
	code, body = do("GET", "/admin/v1/tables/app.events/status", "")
	require.Equal(t, http.StatusOK, code, body)
	require.Equal(t, "app.events", body["table"])
	require.Len(t, body["partitions"], 4)
	require.Nil(t, body["writer"])
	require.Equal(t, map[string]any{"count": 0.0, "examples": []any{}}, body["unknown_fields"])
	require.EqualValues(t, 0, body["dead_letters"])
	var id int64
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT id FROM tables WHERE name = 'events'`).Scan(&id))
	_, err := pool.Exec(context.Background(), `INSERT INTO unknown_fields (table_id, partition, field_count, examples) VALUES
		($1, 2, 5, '{b,c}'), ($1, 0, 7, '{a,b,x0,x1,x2,x3,x4,x5,x6,x7}')`, id)
	require.NoError(t, err)
	code, body = do("GET", "/admin/v1/tables/app.events/status", "")
	require.Equal(t, http.StatusOK, code, body)
	require.Equal(t, map[string]any{"count": 12.0, "examples": []any{"a", "b", "x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7"}},
		body["unknown_fields"])
	code, body = do("GET", "/admin/v1/tables/app.events~dlq/status", "")
	require.Equal(t, http.StatusBadRequest, code)
	require.Contains(t, body["error"], "dead-letter table")

	code, body = do("GET", "/admin/v1/leases", "")
	require.Equal(t, http.StatusOK, code)
	require.Len(t, body["leases"], 5, "4 partition leases and a writer lease")

	code, body = do("GET", "/admin/v1/tables", "")
	require.Equal(t, http.StatusOK, code)
	require.Len(t, body["tables"], 2, "the table and its dead-letter table")

	code, _ = do("GET", "/admin/v1/tables/app.nope", "")
	require.Equal(t, http.StatusNotFound, code)
	code, body = do("GET", "/admin/v1/tables/nodots", "")
	require.Equal(t, http.StatusBadRequest, code)
	require.Equal(t, `invalid table name: "nodots" must be NAMESPACE.NAME`, body["error"])
	code, body = do("GET", "/admin/v1/nodes/n1/cache", "")
	require.Equal(t, http.StatusNotFound, code, body)
	code, _ = do("GET", "/admin/v1/nodes/ghost/cache", "")
	require.Equal(t, http.StatusNotFound, code)

	code, _ = do("DELETE", "/admin/v1/tables/app.events", "")
	require.Equal(t, http.StatusNoContent, code)
	code, _ = do("DELETE", "/admin/v1/tables/app.events", "")
	require.Equal(t, http.StatusNotFound, code)
	var n int
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM leases`).Scan(&n))
	require.Zero(t, n, "leases go with the table")
}
