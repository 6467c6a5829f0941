package admin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/minkhq/mink/admin"
	"github.com/minkhq/mink/codec/wire"
	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/schemas"
	"github.com/minkhq/mink/tables"
)

func payment(id, scale int) *wire.Schema {
	return &wire.Schema{ID: id, Type: wire.TypeAvro, Text: fmt.Sprintf(`{"type":"record","name":"Payment","fields":[{"name":"id","type":"long"},
 {"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":10,"scale":%d}}]}`, scale)}
}

// A create over a topic whose latest schema (id 2) changed the scale of
// v1's decimal: 60 retained records of v1, then 40 of v2. The dry run
// answers the plan (counts estimated past the budget, and said so) and
// stores nothing; the create stores the plan's decisions before any
// record is indexed.
func TestCreatePlansVersions(t *testing.T) {
	pool, _ := pgtest.Pool(t)
	k := testkit.NewKafka(t, kfake.SeedTopics(1, "pay"))
	reg := testkit.NewRegistry("pay-value", payment(1, 2), payment(2, 3))
	store := schemas.NewStore(pool, reg)
	var values []string
	for i := range 100 {
		values = append(values, string(wire.AppendHeader(nil, 1+i/60, nil))+"x")
	}
	k.Produce(t, "pay", 0, append(values, `{"id":1}`)...) // and one without a header
	post := func(budget int64, query, body string) (int, map[string]any) {
		t.Helper()
		srv := httptest.NewServer(admin.New(pool, k.Client, admin.Config{NodeID: "n1", Schemas: store, CountBudget: budget}))
		defer srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, "POST", srv.URL+"/admin/v1/tables"+query, strings.NewReader(body))
		require.NoError(t, err)
		resp, out := testkit.Send(t, req)
		var m map[string]any
		require.NoError(t, json.Unmarshal(out, &m), string(out))
		return resp.StatusCode, m
	}
	def := `{"namespace":"pay","name":"t","topic":"pay","value_format":"avro"%s}`
	reason := "value: schema id 2: field amount: table has decimal(10, 2), schema has decimal(10, 3); " + schemas.ReasonPromotion

	code, body := post(10, "?dry_run=true", fmt.Sprintf(def, ""))
	require.Equal(t, http.StatusOK, code, body)
	plan := body["plan"].(map[string]any)
	require.Equal(t, map[string]any{"exact": false, "records_read": 20.0, "retained_offsets": 101.0,
		"records_without_header": 0.0, "tombstones": 0.0}, plan["counts"], "windows at offsets 0, 5, …, 95: 12 of v1, 8 of v2")
	value := plan["value"].(map[string]any)
	require.Equal(t, 1.0, value["start_version"])
	require.Equal(t, true, value["chosen"])
	require.Equal(t, []any{
		map[string]any{"version": 1.0, "registry_id": 1.0, "schema_id": 0.0, "records": 61.0},
		map[string]any{"version": 2.0, "registry_id": 2.0, "error": reason, "records": 40.0},
	}, value["versions"])
	_, err := tables.GetByName(context.Background(), pool, "pay", "t")
	require.ErrorIs(t, err, tables.ErrNotFound, "a dry run stores nothing")

	for _, c := range []struct{ query, body, want string }{
		{"", fmt.Sprintf(def, `,"subject_version":3`), `invalid table definition: subject "pay-value" has no version 3 (versions 1 to 2)`},
		{"", `{"namespace":"pay","name":"t","topic":"pay","value_format":"string","subject_version":1}`,
			"invalid table definition: a subject version applies to avro, protobuf and json-schema formats only"},
		{"?dry_run=maybe", fmt.Sprintf(def, ""), `dry_run "maybe": must be true or false`},
	} {
		code, body := post(0, c.query, c.body)
		require.Equal(t, http.StatusBadRequest, code, body)
		require.Equal(t, c.want, body["error"])
	}

	code, body = post(0, "", fmt.Sprintf(def, `,"subject_version":2`))
	require.Equal(t, http.StatusCreated, code, body)
	require.Equal(t, map[string]any{"exact": true, "records_read": 101.0, "retained_offsets": 101.0,
		"records_without_header": 1.0, "tombstones": 0.0}, body["plan"].(map[string]any)["counts"])
	versions := body["plan"].(map[string]any)["value"].(map[string]any)["versions"].([]any)
	require.Equal(t, []any{60.0, 40.0}, []any{versions[0].(map[string]any)["records"], versions[1].(map[string]any)["records"]})
	tbl, err := tables.GetByName(context.Background(), pool, "pay", "t")
	require.NoError(t, err)
	ws, err := schemas.WriterSchemas(context.Background(), pool, tbl.ID)
	require.NoError(t, err)
	zero := 0
	require.Equal(t, []schemas.WriterSchemaInfo{
		{Role: "value", RegistryID: 1, Error: "value: schema id 1: field amount: table has decimal(10, 3), schema has decimal(10, 2); " + schemas.ReasonPromotion},
		{Role: "value", RegistryID: 2, SchemaID: &zero},
	}, ws, "decided at create, as planned")
}
