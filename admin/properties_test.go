package admin_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/minkhq/mink/admin"
	"github.com/minkhq/mink/commit"
	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/tables"
)

// TestSetProperties: POST …/properties changes changeable properties in
// the table's row and in its Iceberg metadata at once (200), and refuses
// other properties, malformed values, group-tag patterns path.Match
// rejects, unknown fields and dead-letter tables with the admin API's
// error body (400); an unknown table is 404.
func TestSetProperties(t *testing.T) {
	ctx := context.Background()
	pool, _ := pgtest.Pool(t)
	k := testkit.NewKafka(t, kfake.SeedTopics(2, "events"))
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
	code, body := do("POST", "/admin/v1/tables", `{"namespace":"app","name":"events","topic":"events","value_format":"string",
		"properties":{"mink.group-tags":"billing,etl-*","history.expire.max-snapshot-age-ms":"60000"}}`)
	require.Equal(t, http.StatusCreated, code, body)
	code, body = do("POST", "/admin/v1/tables", `{"namespace":"app","name":"bad","topic":"events","value_format":"string",
		"properties":{"mink.group-tags":"billing,[etl"}}`)
	require.Equal(t, http.StatusBadRequest, code, body)
	require.Contains(t, body["error"], `"[etl" is not a valid pattern`)

	// A reader's IO setting is refused, the key named, at create and change.
	code, body = do("POST", "/admin/v1/tables", `{"namespace":"app","name":"proxied","topic":"events","value_format":"string",
		"properties":{"s3.proxy-uri":"http://proxy.example:3128"}}`)
	require.Equal(t, http.StatusBadRequest, code, body)
	require.Contains(t, body["error"], `property "s3.proxy-uri" configures a reader's storage access`)
	code, body = do("POST", "/admin/v1/tables/app.events/properties", `{"set":{"py-io-impl":"evil.FileIO"}}`)
	require.Equal(t, http.StatusBadRequest, code, body)
	require.Contains(t, body["error"], `property "py-io-impl" configures a reader's storage access`)

	code, body = do("POST", "/admin/v1/tables/app.events/properties",
		`{"set":{"mink.group-tags":"billing, audit-?","write.target-file-size-bytes":"1048576"},"remove":["history.expire.max-snapshot-age-ms"]}`)
	require.Equal(t, http.StatusOK, code, body)
	props := body["properties"].(map[string]any)
	require.Equal(t, "billing, audit-?", props["mink.group-tags"])
	require.NotContains(t, props, "history.expire.max-snapshot-age-ms")

	tbl, err := tables.GetByName(ctx, pool, "app", "events")
	require.NoError(t, err)
	require.Equal(t, []string{"billing", "audit-?"}, tbl.GroupTags())
	require.Equal(t, int64(1<<20), tbl.TargetFileSize())
	h, err := commit.Read(ctx, pool, tbl, tbl)
	require.NoError(t, err)
	md, err := table.ParseMetadataBytes(h.Metadata)
	require.NoError(t, err)
	require.Equal(t, "billing, audit-?", md.Properties()["mink.group-tags"], "the change reaches the Iceberg metadata")
	require.Equal(t, "1048576", md.Properties()["write.target-file-size-bytes"])
	require.NotContains(t, md.Properties(), "history.expire.max-snapshot-age-ms")
	require.Equal(t, h.MetadataLocation, tbl.MetadataLocation)
	require.Equal(t, tbl.MetadataLocation, body["metadata_location"])
	dlq, err := tables.DLQ(ctx, pool, tbl.ID)
	require.NoError(t, err)
	require.Equal(t, tbl.Properties, dlq.Properties, "the dead-letter table's properties change with its table's")
	dh, err := commit.Read(ctx, pool, dlq, tbl)
	require.NoError(t, err)
	dmd, err := table.ParseMetadataBytes(dh.Metadata)
	require.NoError(t, err)
	require.NotContains(t, dmd.Properties(), "history.expire.max-snapshot-age-ms")
	require.Equal(t, "1048576", dmd.Properties()["write.target-file-size-bytes"])

	for _, b := range []struct{ path, body, msg string }{
		{"/admin/v1/tables/app.events/properties", `{"set":{"mink.json.field-matching":"case-insensitive"}}`, "cannot be changed after create"},
		{"/admin/v1/tables/app.events/properties", `{"remove":["mink.value-subject"]}`, "cannot be changed after create"},
		{"/admin/v1/tables/app.events/properties", `{"set":{"mink.group-tags":"a,,b"}}`, "empty group name"},
		{"/admin/v1/tables/app.events/properties", `{"set":{"mink.group-tags":"x\\"}}`, "not a valid pattern"},
		{"/admin/v1/tables/app.events/properties", `{"set":{"write.target-file-size-bytes":"0"}}`, "write.target-file-size-bytes"},
		{"/admin/v1/tables/app.events/properties", `{"set":{"mink.group-tags":"a"},"remove":["mink.group-tags"]}`, "both set and removed"},
		{"/admin/v1/tables/app.events/properties", `{}`, "nothing to change"},
		{"/admin/v1/tables/app.events/properties", `{"sett":{}}`, "sett"},
		{"/admin/v1/tables/app.events~dlq/properties", `{"set":{"mink.group-tags":"a"}}`, "dead-letter table"},
	} {
		code, body := do("POST", b.path, b.body)
		require.Equal(t, http.StatusBadRequest, code, b.body)
		require.Contains(t, body["error"], b.msg, b.body)
	}
	code, _ = do("POST", "/admin/v1/tables/app.nope/properties", `{"set":{"mink.group-tags":"a"}}`)
	require.Equal(t, http.StatusNotFound, code)
	after, err := tables.GetByName(ctx, pool, "app", "events")
	require.NoError(t, err)
	require.Equal(t, tbl.Properties, after.Properties, "refused changes change nothing")
}
