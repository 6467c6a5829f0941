package cli

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/writer"
)

// `mink table alter` and `mink table repair` against a fake admin API:
// what they send, the batches repair walks with after=, its progress and
// its summary; and their command line mistakes.
func TestAlterAndRepairCommands(t *testing.T) {
	var calls []string
	batches := map[string]writer.RepairResult{
		"":      {SchemaID: 2, Examined: 2, Repaired: 1, Records: 5, DeadLetters: 1, Remaining: 3, Next: &writer.Position{Partition: 0, Offset: 40}},
		"0:40":  {SchemaID: 2, Examined: 2, Repaired: 1, Records: 2, Unrepairable: 4, UnrepairableRanges: 1, Remaining: 1, Next: &writer.Position{Partition: 1, Offset: 7}},
		"1:7":   {SchemaID: 2, Examined: 1, Pending: 1},
		"empty": {SchemaID: 2},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls = append(calls, r.Method+" "+r.URL.RequestURI())
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/admin/v1/tables/ns.t/schema":
			var body map[string]any
			require.NoError(t, json.NewDecoder(r.Body).Decode(&body))
			require.Equal(t, "struct", body["type"])
			_, _ = w.Write([]byte(`{"table":"ns.t","changed":true,"schema_id":2,"schema":{"type":"struct","schema-id":2,"fields":[]}}`))
		case r.URL.Path == "/admin/v1/tables/ns.bad/schema":
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":"invalid table definition: field n: table has long, schema has string; Iceberg allows only int→long, float→double, wider decimal precision and required→optional"}`))
		case r.URL.Path == "/admin/v1/tables/ns.t/repair":
			require.Equal(t, "3", r.URL.Query().Get("limit"))
			_ = json.NewEncoder(w).Encode(batches[r.URL.Query().Get("after")])
		case r.URL.Path == "/admin/v1/tables/ns.none/repair":
			_ = json.NewEncoder(w).Encode(batches["empty"])
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer srv.Close()
	file := filepath.Join(t.TempDir(), "schema.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"type":"struct","fields":[{"id":1,"name":"note","type":"string","required":false}]}`), 0o600))

	run := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := Main(append(args, "--admin", srv.URL), &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}
	code, out, errOut := run("table", "alter", "ns.t", "--schema", file)
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "altered ns.t: schema version 2; files built from now on use it\n"+
		"run `mink table repair ns.t` to move the dead letters it now decodes into the table\n", out)
	code, _, errOut = run("table", "alter", "ns.bad", "--schema", file)
	require.Equal(t, 1, code)
	require.Equal(t, "mink table alter: 400 Bad Request: invalid table definition: field n: table has long, schema has string; "+
		"Iceberg allows only int→long, float→double, wider decimal precision and required→optional\n", errOut)

	calls = nil
	code, out, errOut = run("table", "repair", "ns.t", "--batch", "3")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, []string{
		"POST /admin/v1/tables/ns.t/repair?limit=3",
		"POST /admin/v1/tables/ns.t/repair?after=0%3A40&limit=3",
		"POST /admin/v1/tables/ns.t/repair?after=1%3A7&limit=3",
	}, calls)
	require.Equal(t, strings.Join([]string{
		"ranges 2/5, 5 records repaired",
		"ranges 4/5, 7 records repaired",
		"ranges 5/5, 7 records repaired",
		"repaired 2 of 5 ranges with schema version 2: 7 records moved from ns.t~dlq to ns.t",
		"1 dead letters still do not decode with schema version 2",
		"4 dead letters could not be repaired: Kafka no longer holds their records (1 ranges start below the log start offset)",
		"1 ranges are pending (their table side is being committed): run mink table repair ns.t again shortly",
	}, "\n")+"\n", out)

	code, out, _ = run("table", "repair", "ns.none")
	require.Equal(t, 0, code)
	require.Equal(t, "nothing to repair: no dead letters of ns.none were built with a schema version older than 2, and no rows read null for a column it gives a default\n", out)

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"table", "alter", "ns.t"}, "mink table alter: --schema is required"},
		{[]string{"table", "alter"}, "mink table alter: missing table name NS.NAME"},
		{[]string{"table", "repair"}, "mink table repair: missing table name NS.NAME"},
		{[]string{"table", "repair", "ns.t", "--batch", "0"}, "mink table repair: --batch must be between 1 and 1000, not 0"},
		{[]string{"table", "repair", "nst"}, `mink table repair: table name "nst" must be NS.NAME`},
	} {
		code, out, errOut := run(c.args...)
		require.Equal(t, 2, code, errOut)
		require.Empty(t, out)
		require.True(t, strings.HasPrefix(errOut, c.want), "%q", errOut)
	}

	// `mink help table` describes both.
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, Main([]string{"help", "table"}, &stdout, &stderr))
	require.Contains(t, stdout.String(), "mink table alter NS.NAME --schema FILE")
	require.Contains(t, stdout.String(), "mink table repair NS.NAME [--batch 20]")
}
