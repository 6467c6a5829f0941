package admin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/minkhq/mink/admin"
	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/internal/testkit"
)

// The bug report: `mink table create --infer` over a topic whose records
// nest 100,000 objects and 400,000 arrays made the node eat 24 GB. Now
// inference skips them (a 201 with the column of the third record), a
// topic of only such records is a 400 saying why, and a declared schema
// nested too deep is a 400 naming the path; each answers at once.
func TestCreateInferDeep(t *testing.T) {
	pool, _ := pgtest.Pool(t)
	k := testkit.NewKafka(t, kfake.SeedTopics(1, "deep", "deeponly", "events"))
	srv := httptest.NewServer(admin.New(pool, k.Client, admin.Config{NodeID: "n1", Warehouse: "mink"}))
	defer srv.Close()
	a := strings.Repeat(`{"a":`, 100_000) + "1" + strings.Repeat("}", 100_000)
	b := strings.Repeat("[", 400_000) + strings.Repeat("]", 400_000)
	k.Produce(t, "deep", 0, a, b, `{"id":1}`)
	k.Produce(t, "deeponly", 0, a, b)

	create := func(body string) (int, map[string]any) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, "POST", srv.URL+"/admin/v1/tables", strings.NewReader(body))
		require.NoError(t, err)
		resp, out := testkit.Send(t, req)
		var m map[string]any
		_ = json.Unmarshal(out, &m)
		return resp.StatusCode, m
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)

	code, body := create(`{"namespace":"shop","name":"deep","topic":"deep","value_format":"json","infer":true}`)
	require.Equal(t, http.StatusCreated, code, body)
	sc, err := json.Marshal(body["schema"])
	require.NoError(t, err)
	require.Contains(t, string(sc), `"name":"id","required":false,"type":"long"`)
	require.NotContains(t, string(sc), `"name":"a"`)

	code, body = create(`{"namespace":"shop","name":"deeponly","topic":"deeponly","value_format":"json","infer":true}`)
	require.Equal(t, http.StatusBadRequest, code, body)
	require.Equal(t, "invalid table definition: infer the schema of topic deeponly: no JSON object among the 2 records to infer a schema from "+
		"(2 records skipped; the first, partition 0 offset 0: JSON nested too deep to infer: field "+
		strings.TrimSuffix(strings.Repeat("a.", 64), ".")+": an object at depth 65, deeper than 64 levels)", body["error"])

	runtime.ReadMemStats(&after)
	// The records read (1.4 MB each time) and their copies; quadratic
	// paths were gigabytes.
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64<<20), "bytes allocated")

	// A declared schema 65 levels deep.
	typ := `"long"`
	for i := range 64 {
		typ = fmt.Sprintf(`{"type":"list","element-id":%d,"element":%s,"element-required":false}`, 100+i, typ)
	}
	code, body = create(`{"namespace":"shop","name":"declared","topic":"events","value_format":"json","schema":` +
		`{"type":"struct","fields":[{"id":1,"name":"l","required":false,"type":` + typ + `}]}}`)
	require.Equal(t, http.StatusBadRequest, code, body)
	require.Contains(t, body["error"], "field l"+strings.Repeat(".element", 64)+": types nested deeper than 64 levels")
}
