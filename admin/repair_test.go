package admin_test

import (
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
	"github.com/minkhq/mink/schemas"
)

// POST …/schema alters a json table (200, then nothing to change; 400 with
// the evolution error, for other formats and for bad bodies); POST
// …/repair answers a repair batch (nothing to repair here) and refuses bad
// parameters and dead-letter tables.
func TestAlterAndRepairAPI(t *testing.T) {
	pool, _ := pgtest.Pool(t)
	k := testkit.NewKafka(t, kfake.SeedTopics(1, "events"))
	srv := httptest.NewServer(admin.New(pool, k.Client, admin.Config{NodeID: "n1", Warehouse: "mink"}))
	defer srv.Close()
	do := func(method, path, body string) (int, map[string]any) {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		require.NoError(t, err)
		resp, b := testkit.Send(t, req)
		var out map[string]any
		require.NoError(t, json.Unmarshal(b, &out), string(b))
		return resp.StatusCode, out
	}
	code, body := do("POST", "/admin/v1/tables", `{"namespace":"app","name":"j","topic":"events","value_format":"json",
		"schema":{"type":"struct","fields":[{"id":1,"name":"n","type":"long","required":false}]}}`)
	require.Equal(t, http.StatusCreated, code, body)
	code, body = do("POST", "/admin/v1/tables", `{"namespace":"app","name":"r","topic":"events","value_format":"raw"}`)
	require.Equal(t, http.StatusCreated, code, body)

	note := `{"type":"struct","fields":[{"id":1,"name":"note","type":"string","required":false}]}`
	code, body = do("POST", "/admin/v1/tables/app.j/schema", note)
	require.Equal(t, http.StatusOK, code, body)
	require.Equal(t, "app.j", body["table"])
	require.Equal(t, true, body["changed"])
	require.EqualValues(t, 1, body["schema_id"])
	code, body = do("POST", "/admin/v1/tables/app.j/schema", note)
	require.Equal(t, http.StatusOK, code, body)
	require.Equal(t, false, body["changed"])
	require.EqualValues(t, 1, body["schema_id"])

	for _, c := range []struct {
		path, body string
		code       int
		msg        string
	}{
		{"/admin/v1/tables/app.j/schema", `{"type":"struct","fields":[{"id":1,"name":"n","type":"string","required":false}]}`, 400,
			"invalid table definition: field n: table has long, schema has string; " + schemas.ReasonPromotion},
		{"/admin/v1/tables/app.r/schema", note, 400, "invalid table definition: raw tables have one fixed value column; only json tables take a declared schema"},
		{"/admin/v1/tables/app.j~dlq/schema", note, 400, "invalid table definition: app.j~dlq is a dead-letter table: alter the table it holds the dead letters of"},
		{"/admin/v1/tables/app.j/schema", `{"type":`, 400, `invalid schema: unexpected end of JSON input (expected an Iceberg schema: {"type":"struct","fields":[…]})`},
		{"/admin/v1/tables/app.nope/schema", note, 404, "table not found"},
		{"/admin/v1/tables/app.j/repair?limit=0", "", 400, `limit must be between 1 and 1000, not "0"`},
		{"/admin/v1/tables/app.j/repair?after=3", "", 400, `after must be PARTITION:OFFSET, not "3"`},
		{"/admin/v1/tables/app.j~dlq/repair", "", 400, "invalid table definition: app.j~dlq is a dead-letter table: repair the table it holds the dead letters of"},
	} {
		code, body := do("POST", c.path, c.body)
		require.Equal(t, c.code, code, "%s: %v", c.path, body)
		require.Equal(t, c.msg, body["error"], c.path)
	}

	code, body = do("POST", "/admin/v1/tables/app.j/repair?limit=5&after=0:10", "")
	require.Equal(t, http.StatusOK, code, body)
	require.Equal(t, map[string]any{"schema_id": 1.0, "examined": 0.0, "repaired": 0.0, "records": 0.0, "default_ranges": 0.0, "default_rows": 0.0,
		"dead_letters": 0.0, "unrepairable": 0.0, "unrepairable_ranges": 0.0, "pending": 0.0, "remaining": 0.0}, body)
}
