package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/devenv"
	"github.com/minkhq/mink/internal/clustertest"
)

// Issue #9, parts 2 and 3, end to end: columns VBELN and AUFNR (and
// Title), records with upper- and lower-case keys and a number for the
// string column Title. With exact field matching (the default) the
// lower-case record is a dead letter naming its keys, and the unknown
// fields show in /metrics and in the admin status; with case-insensitive
// matching both records are rows with their values. 1941 becomes "1941".
func TestJSONFieldMatching(t *testing.T) {
	env := startEnv(t, 1)
	ctx := context.Background()
	url := env.Nodes[0].URL()
	require.NoError(t, env.Kafka.CreateTopic("orders", 1, nil))
	schema := json.RawMessage(`{"type":"struct","fields":[
		{"id":1,"name":"VBELN","type":"string","required":false},
		{"id":2,"name":"AUFNR","type":"string","required":false},
		{"id":3,"name":"Title","type":"string","required":false}]}`)
	def := func(name string, props map[string]string) map[string]any {
		return map[string]any{"namespace": "sap", "name": name, "topic": "orders", "value_format": "json",
			"schema": schema, "properties": props}
	}
	require.NoError(t, devenv.CreateTable(ctx, url, def("orders", nil)))
	require.NoError(t, devenv.CreateTable(ctx, url, def("orders_ci", map[string]string{"mink.json.field-matching": "case-insensitive"})))
	err := devenv.CreateTable(ctx, url, def("orders_bad", map[string]string{"mink.json.field-matching": "loose"}))
	require.ErrorContains(t, err, "400 Bad Request")
	require.ErrorContains(t, err, `invalid table definition: property mink.json.field-matching must be exact or case-insensitive, not \"loose\"`)

	values := []string{`{"VBELN":"0001","AUFNR":"A1"}`, `{"vbeln":"0002","aufnr":"A2"}`, `{"Title": 1941}`}
	cl, err := kgo.NewClient(kgo.SeedBrokers(env.Brokers...))
	require.NoError(t, err)
	defer cl.Close()
	for _, v := range values { // one by one: offsets 0, 1, 2
		require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte(v)}).FirstErr())
	}
	clustertest.WaitCaughtUp(t, url, "sap.orders")
	clustertest.WaitCaughtUp(t, url, "sap.orders_ci")

	type row struct{ VBELN, AUFNR, Title *string }
	readRows := func(name string) map[int64]row {
		at := clustertest.ScanAll(t, url, "sap."+name)
		out := map[int64]row{}
		offsets := clustertest.Column(t, at, "_kafka", "offset")
		cols := [3][]any{}
		for i, c := range []string{"VBELN", "AUFNR", "Title"} {
			for _, a := range clustertest.Column(t, at, c) {
				cols[i] = append(cols[i], a)
			}
		}
		for c := range offsets {
			for i := 0; i < offsets[c].Len(); i++ {
				var r row
				for j, dst := range []**string{&r.VBELN, &r.AUFNR, &r.Title} {
					if s := cols[j][c].(*array.String); s.IsValid(i) {
						v := s.Value(i)
						*dst = &v
					}
				}
				out[offsets[c].(*array.Int64).Value(i)] = r
			}
		}
		return out
	}
	str := func(s string) *string { return &s }

	// Exact: the lower-case record is a dead letter, with its bytes and the
	// unknown names.
	require.Equal(t, map[int64]row{
		0: {VBELN: str("0001"), AUFNR: str("A1")},
		2: {Title: str("1941")},
	}, readRows("orders"))
	dt := clustertest.ScanAll(t, url, "sap.orders~dlq")
	require.EqualValues(t, 1, dt.NumRows())
	require.EqualValues(t, 1, clustertest.Column(t, dt, "_kafka", "offset")[0].(*array.Int64).Value(0))
	require.Equal(t, values[1], string(clustertest.Column(t, dt, "value")[0].(*array.Binary).Value(0)))
	require.Equal(t, `no key of the object matches a column (mink.json.field-matching = exact); unknown fields: "vbeln", "aufnr"`,
		clustertest.Column(t, dt, "error")[0].(*array.String).Value(0))

	require.Equal(t, 2.0, metricValue(t, url, `mink_json_unknown_fields_total{partition="0",table="sap.orders"}`))
	require.Equal(t, 1.0, metricValue(t, url, `mink_dead_letters_total{partition="0",table="sap.orders"}`))
	require.Equal(t, 0.0, metricValue(t, url, `mink_json_unknown_fields_total{partition="0",table="sap.orders_ci"}`))

	status := func(name string) (st struct {
		Partitions []struct {
			IndexedOffset int64 `json:"indexed_offset"`
		} `json:"partitions"`
		UnknownFields struct {
			Count    int64    `json:"count"`
			Examples []string `json:"examples"`
		} `json:"unknown_fields"`
		DeadLetters int64 `json:"dead_letters"`
	}) {
		resp, err := http.Get(url + "/admin/v1/tables/sap." + name + "/status")
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.NoError(t, jsonDecode(resp, &st))
		return st
	}
	st := status("orders")
	require.Len(t, st.Partitions, 1)
	require.EqualValues(t, 3, st.Partitions[0].IndexedOffset)
	require.EqualValues(t, 2, st.UnknownFields.Count)
	require.Equal(t, []string{"vbeln", "aufnr"}, st.UnknownFields.Examples)
	require.EqualValues(t, 1, st.DeadLetters)

	// Case-insensitive: both records are rows with their values.
	require.Equal(t, map[int64]row{
		0: {VBELN: str("0001"), AUFNR: str("A1")},
		1: {VBELN: str("0002"), AUFNR: str("A2")},
		2: {Title: str("1941")},
	}, readRows("orders_ci"))
	require.EqualValues(t, 0, clustertest.ScanAll(t, url, "sap.orders_ci~dlq").NumRows())
	st = status("orders_ci")
	require.EqualValues(t, 0, st.UnknownFields.Count)
	require.Empty(t, st.UnknownFields.Examples)
	require.EqualValues(t, 0, st.DeadLetters)
}
