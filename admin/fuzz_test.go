package admin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/minkhq/mink/admin"
	"github.com/minkhq/mink/auth"
	"github.com/minkhq/mink/codec"
	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/tables"
)

// FuzzCreateTable posts table definitions (docs/design.md §4.1, the admin
// API's create request) to the admin API over a real PostgreSQL and an
// in-process Kafka with topics "events" (2 partitions) and "quakes"
// (JSON records, for infer), and checks that:
//   - nothing fails on the server's side (no 5xx): a definition is created
//     (201) or refused with a 4xx and an error message;
//   - a created table reads back equal: GET answers the same table (names,
//     topic, formats with their defaults, start, properties, schema) and
//     its dead-letter table with the dead-letter schema; the table is then
//     deleted, so that the next input may create it again.
func FuzzCreateTable(f *testing.F) {
	for _, s := range []string{
		`{"namespace":"app","name":"events","topic":"events","value_format":"string"}`,
		`{"namespace":"app.sub","name":"e_1","topic":"events","value_format":"raw","key_format":"string","start":"latest"}`,
		`{"namespace":"app","name":"j","topic":"events","value_format":"json","schema":` + testkit.USGSSchema + `}`,
		`{"namespace":"app","name":"j","topic":"events","value_format":"json","properties":{"mink.json.field-matching":"case-insensitive",` +
			`"mink.json.unknown-fields":"dead-letter","write.target-file-size-bytes":"1048576","owner":"x"},"schema":{"type":"struct","fields":[` +
			`{"id":1,"name":"a","required":true,"type":{"type":"map","key-id":2,"key":"string","value-id":3,"value":"decimal(38, 2)","value-required":true}},` +
			`{"id":4,"name":"b","required":false,"type":{"type":"list","element-id":5,"element":"uuid","element-required":false}}]}}`,
		`{"namespace":"app","name":"q","topic":"quakes","value_format":"json","infer":true}`,
		`{"namespace":"app","name":"x","topic":"events","value_format":"json","schema":{"type":"struct","fields":[{"id":1,"name":"_kafka","type":"int"}]}}`,
		`{"namespace":"app","name":"x","topic":"events","value_format":"avro"}`,
		`{"namespace":"app","name":"x","topic":"no such topic","value_format":"raw"}`,
		`{"namespace":"app","name":"x","topic":"events","value_format":"raw","properties":{"owner":"\u0000"}}`,
		`{"namespace":"app","name":"x","topic":"events","value_format":"json","schema":{"type":"struct","fields":[{"id":1,"name":"a\u0000","type":"int"}]}}`,
		`{"namespace":"app","name":"x~dlq","topic":"events","value_format":"raw"}`,
		`{"namespace":"","name":"x","topic":"events","value_format":"raw"}`,
		`{"namespace":`,
		`[]`,
	} {
		f.Add([]byte(s))
	}
	pool, _ := pgtest.Pool(f)
	k := testkit.NewKafka(f, kfake.SeedTopics(2, "events"), kfake.SeedTopics(1, "quakes"))
	k.Produce(f, "quakes", 0, `{"id":"a","mag":1.5,"at":"2024-01-01T00:00:00Z","tags":["x"]}`, `{"id":"b","mag":2,"depth":{"km":3}}`,
		`{"id":"c","\u0000":1}`)
	h := admin.New(pool, k.Client, admin.Config{NodeID: "n1", Warehouse: "mink"})
	ctx := auth.WithPrincipal(context.Background(), &auth.Principal{Name: "fuzz", Admin: true})
	do := func(t *testing.T, method, path string, body []byte) (int, []byte) {
		req := httptest.NewRequestWithContext(ctx, method, path, bytes.NewReader(body))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Code, w.Body.Bytes()
	}

	f.Fuzz(func(t *testing.T, body []byte) {
		code, out := do(t, http.MethodPost, "/admin/v1/tables", body)
		if code >= 500 {
			t.Fatalf("%d %s for %s", code, out, body)
		}
		if code != http.StatusCreated {
			var e struct {
				Error string `json:"error"`
			}
			if code < 400 || json.Unmarshal(out, &e) != nil || e.Error == "" {
				t.Fatalf("%d without an error message: %s", code, out)
			}
			return
		}
		var def tables.Definition
		if err := json.Unmarshal(body, &def); err != nil {
			t.Fatalf("created from a definition encoding/json cannot read: %v", err)
		}
		var created, got, dlq tables.Table
		if err := json.Unmarshal(out, &created); err != nil {
			t.Fatal(err)
		}
		name := def.Namespace + "." + def.Name
		defer func() {
			if code, out := do(t, http.MethodDelete, "/admin/v1/tables/"+name, nil); code != http.StatusNoContent {
				t.Fatalf("delete %s: %d %s", name, code, out)
			}
		}()
		code, out = do(t, http.MethodGet, "/admin/v1/tables/"+name, nil)
		if code != http.StatusOK || json.Unmarshal(out, &got) != nil {
			t.Fatalf("get %s: %d %s", name, code, out)
		}
		want := def
		if want.KeyFormat == "" {
			want.KeyFormat = string(codec.Raw)
		}
		if want.Start == "" {
			want.Start = "earliest"
		}
		// A name created before (the seeds repeat some) gets a location of
		// its own: a location is never given out twice.
		base := "s3://mink/" + strings.ReplaceAll(def.Namespace, ".", "/") + "/" + def.Name
		locations := []string{base, base + "-" + strings.ReplaceAll(created.UUID.String(), "-", "")}
		for _, x := range []tables.Table{created, got} {
			if x.Namespace != want.Namespace || x.Name != want.Name || x.Topic != want.Topic || string(x.ValueFormat) != want.ValueFormat ||
				string(x.KeyFormat) != want.KeyFormat || x.Start != want.Start || !slices.Contains(locations, x.Location) {
				t.Fatalf("definition %s\nread back as %+v", body, x)
			}
			for k, v := range want.Properties {
				if x.Properties[k] != v {
					t.Fatalf("property %q: %q read back as %q", k, v, x.Properties[k])
				}
			}
		}
		if !maps.Equal(created.Properties, got.Properties) || !created.Schema.Equals(got.Schema) || created.UUID != got.UUID ||
			created.MetadataLocation != got.MetadataLocation {
			t.Fatalf("created %+v\nread back %+v", created, got)
		}
		if want.Schema != nil && want.ValueFormat == string(codec.JSON) && !want.Infer {
			if sc, _, err := tables.Schemas(&want); err != nil || !sc.Equals(got.Schema) {
				t.Fatalf("schema read back %v; Schemas: %v %v", got.Schema, sc, err)
			}
		}
		code, out = do(t, http.MethodGet, "/admin/v1/tables/"+name+tables.DLQSuffix, nil)
		if code != http.StatusOK || json.Unmarshal(out, &dlq) != nil || !dlq.Schema.Equals(codec.DLQSchema(codec.Format(want.KeyFormat))) ||
			dlq.DLQOf == nil || *dlq.DLQOf != got.ID {
			t.Fatalf("dead-letter table of %s: %d %s", name, code, out)
		}
	})
}
