package catalog_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/catalog"
	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/internal/testkit"
)

const advertise = "http://mink-0.test:8181"

// fixture is a catalog on a fresh schema, served by an httptest server.
type fixture struct {
	t    *testing.T
	pool *pgxpool.Pool
	url  string // the catalog server's
}

func newFixture(t *testing.T, cfg catalog.Config) *fixture {
	t.Helper()
	pool, _ := pgtest.Pool(t)
	return &fixture{t: t, pool: pool, url: serve(t, cfg, pool)}
}

// kafkaSchema is a Mink table's schema: the _kafka struct first, then the
// value (docs/design.md §4.2).
func kafkaSchema() *iceberg.Schema {
	return iceberg.NewSchema(0,
		testkit.KafkaField(),
		iceberg.NestedField{ID: 11, Name: "value", Type: iceberg.PrimitiveTypes.String},
	)
}

// stored is a table as the fixture stored it.
type stored struct {
	id               int64
	location         string
	metadataLocation string
	metadata         []byte
}

// addTable inserts a table (namespace levels joined by ".") with metadata
// made by iceberg-go, as the writer would store it.
func (f *fixture) addTable(ns, name string) stored {
	f.t.Helper()
	loc := "s3://mink/" + strings.ReplaceAll(ns, ".", "/") + "/" + name
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{
		SourceIDs: []int{2}, FieldID: 1000, Name: "partition", Transform: iceberg.IdentityTransform{}})
	id := uuid.New()
	md, err := table.NewMetadataWithUUID(kafkaSchema(), &spec, table.UnsortedSortOrder, loc,
		iceberg.Properties{"mink.topic": name}, id)
	require.NoError(f.t, err)
	js, err := json.Marshal(md)
	require.NoError(f.t, err)
	schemaJSON, err := json.Marshal(md.CurrentSchema())
	require.NoError(f.t, err)

	s := stored{location: loc, metadataLocation: loc + "/metadata/00000-" + id.String() + ".metadata.json", metadata: js}
	ctx := context.Background()
	require.NoError(f.t, f.pool.QueryRow(ctx, `
		INSERT INTO tables (namespace, name, topic, value_format, schema_json, table_uuid, location, metadata_location)
		VALUES ($1, $2, $2, 'string', $3, $4, $5, $6) RETURNING id`,
		ns, name, schemaJSON, id, loc, s.metadataLocation).Scan(&s.id))
	f.storeMetadata(s.id, s.metadataLocation, js)
	return s
}

func (f *fixture) storeMetadata(tableID int64, location string, content []byte) {
	f.t.Helper()
	_, err := f.pool.Exec(context.Background(),
		`INSERT INTO metadata_files (path, table_id, content) VALUES ($1, $2, $3)`,
		strings.TrimPrefix(location, "s3://mink/"), tableID, content)
	require.NoError(f.t, err)
}

// commit stores content as a new metadata file of the table and swaps the
// table's metadata location to it, as a writer's commit does.
func (f *fixture) commit(s stored, file string, content []byte) stored {
	f.t.Helper()
	s.metadataLocation = s.location + "/metadata/" + file
	s.metadata = content
	f.storeMetadata(s.id, s.metadataLocation, content)
	_, err := f.pool.Exec(context.Background(),
		`UPDATE tables SET metadata_location = $1 WHERE id = $2`, s.metadataLocation, s.id)
	require.NoError(f.t, err)
	return s
}

// do sends a request to the fixture and returns the answer and its body.
func (f *fixture) do(method, path string, header ...string) (*http.Response, []byte) {
	f.t.Helper()
	return do(f.t, method, f.url+path, header...)
}

func do(t *testing.T, method, url string, header ...string) (*http.Response, []byte) {
	t.Helper()
	var body io.Reader
	if method == http.MethodPost {
		body = strings.NewReader(`{}`)
	}
	req, err := http.NewRequest(method, url, body)
	require.NoError(t, err)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Add(header[i], header[i+1])
	}
	return testkit.Send(t, req)
}

type errorModel struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Code    int    `json:"code"`
}

// requireError checks that an answer is the spec's ErrorModel with status
// and type.
func requireError(t *testing.T, rsp *http.Response, body []byte, status int, typ string) errorModel {
	t.Helper()
	require.Equal(t, status, rsp.StatusCode, "body: %s", body)
	require.Equal(t, "application/json", rsp.Header.Get("Content-Type"))
	var e struct {
		Error *errorModel `json:"error"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&e), "body: %s", body)
	require.NotNil(t, e.Error, "body: %s", body)
	require.Equal(t, typ, e.Error.Type)
	require.Equal(t, status, e.Error.Code)
	require.NotEmpty(t, e.Error.Message)
	return *e.Error
}

func decode[T any](t *testing.T, body []byte) T {
	t.Helper()
	var v T
	require.NoError(t, json.Unmarshal(body, &v), "body: %s", body)
	return v
}

func TestNewChecksConfig(t *testing.T) {
	pool, _ := pgtest.Pool(t)
	for _, cfg := range []catalog.Config{
		{},
		{AdvertiseURL: "mink-0:8181"},
		{AdvertiseURL: "ftp://mink-0"},
		{AdvertiseURL: advertise, Warehouse: "a/b"},
		{AdvertiseURL: advertise, QueryTimeout: -1},
	} {
		_, err := catalog.New(cfg, pool)
		require.Error(t, err, "%+v", cfg)
	}
	_, err := catalog.New(catalog.Config{AdvertiseURL: advertise}, nil)
	require.Error(t, err)
	_, err = catalog.New(catalog.Config{AdvertiseURL: advertise + "/"}, pool)
	require.NoError(t, err)
}

func TestConfigEndpoint(t *testing.T) {
	f := newFixture(t, catalog.Config{AdvertiseURL: advertise + "/", Region: "eu-west-1"})
	for _, path := range []string{"/v1/config", "/v1/config?warehouse=mink", "/v1/config?warehouse=elsewhere"} {
		rsp, body := f.do("GET", path)
		require.Equal(t, http.StatusOK, rsp.StatusCode)
		require.Equal(t, "application/json", rsp.Header.Get("Content-Type"))
		cfg := decode[struct {
			Defaults  map[string]string `json:"defaults"`
			Overrides map[string]string `json:"overrides"`
			Endpoints []string          `json:"endpoints"`
		}](t, body)
		require.Equal(t, map[string]string{
			"s3.endpoint":          advertise,
			"s3.path-style-access": "true",
			"s3.region":            "eu-west-1",
			"client.region":        "eu-west-1",
		}, cfg.Defaults)
		require.NotNil(t, cfg.Overrides)
		require.Empty(t, cfg.Overrides)
		require.ElementsMatch(t, []string{
			"GET /v1/{prefix}/namespaces",
			"GET /v1/{prefix}/namespaces/{namespace}",
			"HEAD /v1/{prefix}/namespaces/{namespace}",
			"GET /v1/{prefix}/namespaces/{namespace}/tables",
			"GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
			"HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}",
			"POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan",
			"GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan/{plan-id}",
			"DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan/{plan-id}",
			"POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/tasks",
			"GET /v1/{prefix}/namespaces/{namespace}/views",
			"GET /v1/{prefix}/namespaces/{namespace}/views/{view}",
			"HEAD /v1/{prefix}/namespaces/{namespace}/views/{view}",
		}, cfg.Endpoints)
	}
}

func TestLoadTableResult(t *testing.T) {
	f := newFixture(t, catalog.Config{AccessKeyID: "ak", SecretAccessKey: "sk"})
	s := f.addTable("demo", "orders")

	rsp, body := f.do("GET", "/v1/namespaces/demo/tables/orders")
	require.Equal(t, http.StatusOK, rsp.StatusCode, "body: %s", body)
	res := decode[struct {
		MetadataLocation string            `json:"metadata-location"`
		Metadata         json.RawMessage   `json:"metadata"`
		Config           map[string]string `json:"config"`
	}](t, body)
	require.Equal(t, s.metadataLocation, res.MetadataLocation)
	require.Equal(t, string(s.metadata), string(res.Metadata), "metadata must be the stored JSON verbatim")
	require.Equal(t, map[string]string{
		"s3.endpoint":          advertise,
		"s3.path-style-access": "true",
		"s3.region":            "us-east-1",
		"client.region":        "us-east-1",
		"s3.access-key-id":     "ak",
		"s3.secret-access-key": "sk",
	}, res.Config)

	// Verbatim means verbatim: a file written with other whitespace comes
	// back with it.
	indented, err := json.MarshalIndent(json.RawMessage(s.metadata), "", "  ")
	require.NoError(t, err)
	f.commit(s, "00001-x.metadata.json", indented)
	_, body = f.do("GET", "/v1/namespaces/demo/tables/orders?snapshots=refs")
	res2 := decode[struct {
		Metadata json.RawMessage `json:"metadata"`
	}](t, body)
	require.Equal(t, string(indented), string(res2.Metadata))

	rsp, body = f.do("GET", "/v1/namespaces/demo/tables/orders?snapshots=some")
	requireError(t, rsp, body, http.StatusBadRequest, "BadRequestException")
}

func TestTableETag(t *testing.T) {
	f := newFixture(t, catalog.Config{})
	s := f.addTable("demo", "orders")
	const path = "/v1/namespaces/demo/tables/orders"

	rsp, body := f.do("GET", path)
	require.Equal(t, http.StatusOK, rsp.StatusCode)
	require.NotEmpty(t, body)
	etag := rsp.Header.Get("ETag")
	require.Regexp(t, `^"[0-9a-f]{32}"$`, etag)

	// If-None-Match = "*" / #entity-tag (RFC 9110 §13.1.2), weak
	// comparison; a field that does not parse is ignored.
	for _, c := range []struct {
		lines []string
		want  int
	}{
		{[]string{etag}, http.StatusNotModified},
		{[]string{"W/" + etag}, http.StatusNotModified},
		{[]string{`"other", ` + etag}, http.StatusNotModified},
		{[]string{`"other",` + etag + `,`}, http.StatusNotModified},
		{[]string{`, ,` + etag}, http.StatusNotModified},
		{[]string{`"a,b", W/` + etag}, http.StatusNotModified}, // a comma inside a tag
		{[]string{"*"}, http.StatusNotModified},
		{[]string{`"other"`, etag}, http.StatusNotModified}, // two field lines
		{[]string{`"other"`}, http.StatusOK},
		{[]string{`W/"other", ""`}, http.StatusOK},
		{[]string{strings.Trim(etag, `"`)}, http.StatusOK},   // unquoted
		{[]string{"w/" + etag}, http.StatusOK},               // W/ is case-sensitive
		{[]string{`"other", *`}, http.StatusOK},              // "*" only alone
		{[]string{`*, *`}, http.StatusOK},                    //
		{[]string{`other, ` + etag}, http.StatusOK},          // not a list of tags
		{[]string{`"a,` + etag[1:] + `,"b"`}, http.StatusOK}, // the tag is "a,"
		{[]string{etag + ` "other"`}, http.StatusOK},         // no comma
		{[]string{"*", etag}, http.StatusOK},                 // "*" in a list again
		{[]string{`"a b", ` + etag}, http.StatusOK},          // a space is not etagc
	} {
		var hdr []string
		for _, l := range c.lines {
			hdr = append(hdr, "If-None-Match", l)
		}
		rsp, body = f.do("GET", path, hdr...)
		require.Equal(t, c.want, rsp.StatusCode, "%q", c.lines)
		require.Equal(t, etag, rsp.Header.Get("ETag"))
		if c.want == http.StatusNotModified {
			require.Empty(t, body)
		} else {
			require.NotEmpty(t, body)
		}
	}

	// A commit moves the metadata location: the old tag no longer matches.
	f.commit(s, "00001-y.metadata.json", s.metadata)
	rsp, body = f.do("GET", path, "If-None-Match", etag)
	require.Equal(t, http.StatusOK, rsp.StatusCode)
	require.NotEmpty(t, body)
	require.NotEqual(t, etag, rsp.Header.Get("ETag"))

	// Another node config (here: credentials) is another tag too, so an
	// engine never keeps stale S3 settings.
	g := newFixture(t, catalog.Config{SecretAccessKey: "rotated"})
	gs := g.addTable("demo", "orders")
	rsp1, _ := f.do("GET", path)
	g.commit(gs, "00001-y.metadata.json", s.metadata) // the same location as f's
	rsp2, _ := g.do("GET", path)
	require.Equal(t, http.StatusOK, rsp2.StatusCode)
	require.NotEqual(t, rsp1.Header.Get("ETag"), rsp2.Header.Get("ETag"))
}

func TestHead(t *testing.T) {
	f := newFixture(t, catalog.Config{})
	f.addTable("a.b", "orders")
	for path, status := range map[string]int{
		"/v1/namespaces/a":                      http.StatusNoContent,
		"/v1/namespaces/a%1Fb":                  http.StatusNoContent,
		"/v1/namespaces/b":                      http.StatusNotFound,
		"/v1/namespaces/a%1Fb/tables/orders":    http.StatusNoContent,
		"/v1/namespaces/a%1Fb/tables/missing":   http.StatusNotFound,
		"/v1/namespaces/a/tables/orders":        http.StatusNotFound,
		"/v1/namespaces/a%1Fb/views/orders":     http.StatusNotFound,
		"/v1/namespaces/a%1Fb/tables/bad%20one": http.StatusNotFound,
	} {
		rsp, body := f.do("HEAD", path)
		require.Equal(t, status, rsp.StatusCode, path)
		require.Empty(t, body, path)
	}
}

func TestNotFound(t *testing.T) {
	f := newFixture(t, catalog.Config{})
	f.addTable("a.b", "orders")
	for _, c := range []struct{ path, typ string }{
		{"/v1/namespaces/nope", "NoSuchNamespaceException"},
		{"/v1/namespaces/nope/tables", "NoSuchNamespaceException"},
		{"/v1/namespaces/a%1Fnope/tables", "NoSuchNamespaceException"},
		{"/v1/namespaces/bad%20name", "NoSuchNamespaceException"},
		{"/v1/namespaces?parent=nope", "NoSuchNamespaceException"},
		{"/v1/namespaces/a%1Fb/tables/nope", "NoSuchTableException"},
		{"/v1/namespaces/nope/tables/orders", "NoSuchTableException"},
		{"/v1/namespaces/a%1Fb/tables/orders~nope", "NoSuchTableException"},
		{"/v1/namespaces/a%1Fb/views/orders", "NoSuchViewException"},
		{"/v1/nope", "NotFoundException"},
		{"/v1/mink/namespaces", "NotFoundException"},
		{"/v1/namespaces/a%1Fb/tables/orders/plan", "NotFoundException"},
	} {
		rsp, body := f.do("GET", c.path)
		requireError(t, rsp, body, http.StatusNotFound, c.typ)
	}
	rsp, body := f.do("PATCH", "/v1/namespaces")
	requireError(t, rsp, body, http.StatusNotFound, "NotFoundException")
}

// A namespace with an empty level is a malformed request (400), not a
// namespace that does not exist: none can.
func TestEmptyNamespaceLevel(t *testing.T) {
	f := newFixture(t, catalog.Config{})
	f.addTable("a.b", "orders")
	for _, path := range []string{
		"/v1/namespaces/x%1F/tables",
		"/v1/namespaces/a%1F%1Fb/tables",
		"/v1/namespaces/%1Fa",
		"/v1/namespaces/a..b/tables/orders",
		"/v1/namespaces/a%1F/tables/orders",
		"/v1/namespaces?parent=a%1F",
	} {
		rsp, body := f.do("GET", path)
		requireError(t, rsp, body, http.StatusBadRequest, "BadRequestException")
		require.Contains(t, string(body), "empty namespace level", path)
	}
	rsp, body := f.do("HEAD", "/v1/namespaces/a%1F")
	require.Equal(t, http.StatusBadRequest, rsp.StatusCode)
	require.Empty(t, body)
	// A level no Mink name can have is still a namespace that does not exist.
	rsp, body = f.do("GET", "/v1/namespaces/a%1Fb%20c/tables")
	requireError(t, rsp, body, http.StatusNotFound, "NoSuchNamespaceException")
}

func TestWritesForbidden(t *testing.T) {
	f := newFixture(t, catalog.Config{})
	f.addTable("a.b", "orders")
	for _, route := range []string{
		"POST /v1/namespaces",
		"DELETE /v1/namespaces/a%1Fb",
		"POST /v1/namespaces/a%1Fb/properties",
		"POST /v1/namespaces/a%1Fb/tables",
		"POST /v1/namespaces/a%1Fb/register",
		"POST /v1/namespaces/a%1Fb/tables/orders",
		"DELETE /v1/namespaces/a%1Fb/tables/orders",
		"DELETE /v1/namespaces/a%1Fb/tables/orders?purgeRequested=true",
		"POST /v1/tables/rename",
		"POST /v1/transactions/commit",
		"POST /v1/namespaces/a%1Fb/views",
		"POST /v1/namespaces/a%1Fb/register-view",
		"POST /v1/namespaces/a%1Fb/views/v",
		"DELETE /v1/namespaces/a%1Fb/views/v",
		"POST /v1/views/rename",
	} {
		method, path, _ := strings.Cut(route, " ")
		rsp, body := f.do(method, path)
		e := requireError(t, rsp, body, http.StatusForbidden, "ForbiddenException")
		require.Contains(t, e.Message, "Mink tables are read-only: ", route)
	}

	// Metrics reports are accepted and dropped.
	rsp, body := f.do("POST", "/v1/namespaces/a%1Fb/tables/orders/metrics")
	require.Equal(t, http.StatusNoContent, rsp.StatusCode)
	require.Empty(t, body)
}

func TestViews(t *testing.T) {
	f := newFixture(t, catalog.Config{})
	f.addTable("a", "orders")
	rsp, body := f.do("GET", "/v1/namespaces/a/views")
	require.Equal(t, http.StatusOK, rsp.StatusCode)
	require.JSONEq(t, `{"identifiers":[]}`, string(body))
	rsp, body = f.do("GET", "/v1/namespaces/nope/views")
	requireError(t, rsp, body, http.StatusNotFound, "NoSuchNamespaceException")
}

type listNamespaces struct {
	Namespaces    [][]string `json:"namespaces"`
	NextPageToken *string    `json:"next-page-token"`
}

type listTables struct {
	Identifiers []struct {
		Namespace []string `json:"namespace"`
		Name      string   `json:"name"`
	} `json:"identifiers"`
	NextPageToken *string `json:"next-page-token"`
}

func TestMultipartNamespaces(t *testing.T) {
	f := newFixture(t, catalog.Config{})
	f.addTable("a.b", "orders")
	f.addTable("a.b", "orders~dlq")
	f.addTable("a.b.c", "deep")
	f.addTable("a", "top")
	f.addTable("a_x", "other") // "_" is a LIKE wildcard: must not leak into a's children
	f.addTable("z", "last")

	for path, want := range map[string][][]string{
		"/v1/namespaces":                  {{"a"}, {"a_x"}, {"z"}},
		"/v1/namespaces?parent=":          {{"a"}, {"a_x"}, {"z"}},
		"/v1/namespaces?parent=a":         {{"a", "b"}},
		"/v1/namespaces?parent=a%1Fb":     {{"a", "b", "c"}},
		"/v1/namespaces?parent=a.b":       {{"a", "b", "c"}},
		"/v1/namespaces?parent=a%1Fb%1Fc": {},
		"/v1/namespaces?parent=z":         {},
	} {
		rsp, body := f.do("GET", path)
		require.Equal(t, http.StatusOK, rsp.StatusCode, "%s: %s", path, body)
		got := decode[listNamespaces](t, body)
		require.NotNil(t, got.Namespaces, path)
		require.Equal(t, want, got.Namespaces, path)
		require.Nil(t, got.NextPageToken, path)
	}

	rsp, body := f.do("GET", "/v1/namespaces/a%1Fb")
	require.Equal(t, http.StatusOK, rsp.StatusCode)
	require.JSONEq(t, `{"namespace":["a","b"],"properties":{"location":"s3://mink/a/b"}}`, string(body))

	for _, path := range []string{"/v1/namespaces/a%1Fb/tables", "/v1/namespaces/a.b/tables"} {
		rsp, body = f.do("GET", path)
		require.Equal(t, http.StatusOK, rsp.StatusCode)
		require.JSONEq(t, `{"identifiers":[
			{"namespace":["a","b"],"name":"orders"},
			{"namespace":["a","b"],"name":"orders~dlq"}]}`, string(body))
	}
	// A namespace holding only namespaces lists no tables.
	f.addTable("n.m", "t")
	rsp, body = f.do("GET", "/v1/namespaces/n/tables")
	require.Equal(t, http.StatusOK, rsp.StatusCode)
	require.JSONEq(t, `{"identifiers":[]}`, string(body))

	rsp, _ = f.do("GET", "/v1/namespaces/a%1Fb/tables/orders~dlq")
	require.Equal(t, http.StatusOK, rsp.StatusCode)
}

func TestPaging(t *testing.T) {
	f := newFixture(t, catalog.Config{})
	for i := range 5 {
		f.addTable("p", fmt.Sprintf("t%d", i))
		f.addTable(fmt.Sprintf("ns%d.sub", i), "x")
	}

	// Tables: pageToken (empty) starts paging; three pages of 2, 2, 1.
	var pages [][]string
	tok := ""
	for {
		rsp, body := f.do("GET", "/v1/namespaces/p/tables?pageSize=2&pageToken="+tok)
		require.Equal(t, http.StatusOK, rsp.StatusCode, "body: %s", body)
		got := decode[listTables](t, body)
		var names []string
		for _, id := range got.Identifiers {
			require.Equal(t, []string{"p"}, id.Namespace)
			names = append(names, id.Name)
		}
		pages = append(pages, names)
		if got.NextPageToken == nil {
			require.NotContains(t, string(body), "next-page-token")
			break
		}
		tok = *got.NextPageToken
		require.Less(t, len(pages), 10)
	}
	require.Equal(t, [][]string{{"t0", "t1"}, {"t2", "t3"}, {"t4"}}, pages)

	// Namespaces page the same way.
	var nss [][]string
	tok = ""
	for n := 0; ; n++ {
		require.Less(t, n, 10)
		rsp, body := f.do("GET", "/v1/namespaces?pageSize=2&pageToken="+tok)
		require.Equal(t, http.StatusOK, rsp.StatusCode, "body: %s", body)
		got := decode[listNamespaces](t, body)
		require.LessOrEqual(t, len(got.Namespaces), 2)
		nss = append(nss, got.Namespaces...)
		if got.NextPageToken == nil {
			require.Equal(t, 2, n)
			break
		}
		tok = *got.NextPageToken
	}
	require.Equal(t, [][]string{{"ns0"}, {"ns1"}, {"ns2"}, {"ns3"}, {"ns4"}, {"p"}}, nss)

	// Without pageToken the spec wants everything at once, pageSize or not.
	_, body := f.do("GET", "/v1/namespaces/p/tables?pageSize=2")
	require.Len(t, decode[listTables](t, body).Identifiers, 5)
	require.NotContains(t, string(body), "next-page-token")

	for _, q := range []string{"pageSize=0", "pageSize=-1", "pageSize=two", "pageToken=%21%21", "pageToken=Li4v"} {
		for _, path := range []string{"/v1/namespaces/p/tables?", "/v1/namespaces?"} {
			rsp, body := f.do("GET", path+q)
			requireError(t, rsp, body, http.StatusBadRequest, "BadRequestException")
		}
	}
}
