package catalog

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Handler serves the Iceberg REST catalog under /v1/. Mount it on the node's
// listener at "/v1/"; it answers every path below with an ErrorModel when it
// has nothing better to say.
type Handler struct {
	cfg   Config
	log   *slog.Logger
	store *store
	mux   *http.ServeMux
	// totals caches the file totals of planned snapshots (planning.go).
	totals totalsCache
	// dropped is what loads serve of stored metadata holding client
	// settings (clientio.go).
	dropped clientSettingsDropped

	// configBody is the answer of GET /v1/config; tableConfig the "config" of
	// every LoadTableResult (to which vended credentials are added, under
	// Config.Auth). Both are fixed at New.
	configBody  []byte
	tableConfig map[string]string
	// etagSalt makes table ETags change with tableConfig, so that an engine
	// holding an ETag from before a restart with other settings gets them.
	etagSalt [sha256.Size]byte
}

// route is one method and path of the REST spec that the catalog answers.
type route struct {
	method string
	// path is the spec's template, "/v1/{prefix}/namespaces/{namespace}";
	// the catalog serves it without a prefix.
	path string
	// advertised routes are listed in GET /v1/config's endpoints: the reads.
	// Writes answer 403 and are not listed, so that clients which negotiate
	// refuse them before sending; metrics reports are accepted but not
	// invited.
	advertised bool
	handle     func(h *Handler, w http.ResponseWriter, r *http.Request)
}

// forbidden returns a handler answering 403 for the write named by what
// ("creating a table").
func forbidden(what string) func(*Handler, http.ResponseWriter, *http.Request) {
	return func(_ *Handler, w http.ResponseWriter, r *http.Request) {
		writeErrorModel(w, r, &apiError{http.StatusForbidden, typeForbidden,
			"Mink tables are read-only: " + what + " is not supported. Mink is the only writer; " +
				"tables are defined with `mink table create` and follow their Kafka topics."})
	}
}

// routes lists every route the catalog answers, reads first. Any other
// request under /v1/ answers 404.
var routes = []route{
	{"GET", "/v1/{prefix}/namespaces", true, (*Handler).listNamespaces},
	{"GET", "/v1/{prefix}/namespaces/{namespace}", true, (*Handler).loadNamespace},
	{"HEAD", "/v1/{prefix}/namespaces/{namespace}", true, (*Handler).namespaceExists},
	{"GET", "/v1/{prefix}/namespaces/{namespace}/tables", true, (*Handler).listTables},
	{"GET", "/v1/{prefix}/namespaces/{namespace}/tables/{table}", true, (*Handler).loadTable},
	{"HEAD", "/v1/{prefix}/namespaces/{namespace}/tables/{table}", true, (*Handler).tableExists},
	// Server-side scan planning (planning.go).
	{"POST", planPath, true, (*Handler).planTableScan},
	{"GET", planIDPath, true, (*Handler).fetchPlanningResult},
	{"DELETE", planIDPath, true, (*Handler).cancelPlanning},
	{"POST", tasksPath, true, (*Handler).fetchScanTasks},
	// Advertised under Config.Auth only: without it nothing is vended.
	{"GET", credentialsPath, false, (*Handler).loadCredentials},
	// Mink has no views. Answering the view reads (an empty list, 404)
	// keeps engines that list views next to tables (Trino, Spark) working.
	{"GET", "/v1/{prefix}/namespaces/{namespace}/views", true, (*Handler).listViews},
	{"GET", "/v1/{prefix}/namespaces/{namespace}/views/{view}", true, (*Handler).loadView},
	{"HEAD", "/v1/{prefix}/namespaces/{namespace}/views/{view}", true, (*Handler).loadView},

	{"POST", "/v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics", false, (*Handler).reportMetrics},

	{"POST", "/v1/{prefix}/namespaces", false, forbidden("creating a namespace")},
	{"DELETE", "/v1/{prefix}/namespaces/{namespace}", false, forbidden("dropping a namespace")},
	{"POST", "/v1/{prefix}/namespaces/{namespace}/properties", false, forbidden("updating namespace properties")},
	{"POST", "/v1/{prefix}/namespaces/{namespace}/tables", false, forbidden("creating a table")},
	{"POST", "/v1/{prefix}/namespaces/{namespace}/register", false, forbidden("registering a table")},
	{"POST", "/v1/{prefix}/namespaces/{namespace}/tables/{table}", false, forbidden("committing to a table")},
	{"DELETE", "/v1/{prefix}/namespaces/{namespace}/tables/{table}", false, forbidden("dropping a table")},
	{"POST", "/v1/{prefix}/tables/rename", false, forbidden("renaming a table")},
	{"POST", "/v1/{prefix}/transactions/commit", false, forbidden("committing a transaction")},
	{"POST", "/v1/{prefix}/namespaces/{namespace}/views", false, forbidden("creating a view")},
	{"POST", "/v1/{prefix}/namespaces/{namespace}/register-view", false, forbidden("registering a view")},
	{"POST", "/v1/{prefix}/namespaces/{namespace}/views/{view}", false, forbidden("replacing a view")},
	{"DELETE", "/v1/{prefix}/namespaces/{namespace}/views/{view}", false, forbidden("dropping a view")},
	{"POST", "/v1/{prefix}/views/rename", false, forbidden("renaming a view")},
}

// configResponse is the spec's CatalogConfig.
type configResponse struct {
	Defaults  map[string]string `json:"defaults"`
	Overrides map[string]string `json:"overrides"`
	Endpoints []string          `json:"endpoints"`
}

// New returns the catalog's HTTP handler, reading from pool (migrated by
// pgstore). It checks cfg and fills its defaults.
func New(cfg Config, pool *pgxpool.Pool) (*Handler, error) {
	cfg = cfg.WithDefaults()
	err := cfg.Validate()
	if err != nil {
		return nil, err
	}
	if pool == nil {
		return nil, errors.New("catalog: no Postgres pool")
	}
	h := &Handler{
		cfg: cfg,
		log: cfg.Logger,
		store: &store{
			pool:    pool,
			timeout: cfg.QueryTimeout,
			prefix:  "s3://" + cfg.Warehouse + "/",
		},
		mux: http.NewServeMux(),
	}

	// The keys that point an engine's S3 client at this node. DuckDB reads
	// them only from the table's config, so both carry them (Trino 476
	// reads them from neither: trinodb/trino#25187).
	defaults := map[string]string{
		"s3.endpoint":          cfg.AdvertiseURL,
		"s3.path-style-access": "true",
		"s3.region":            cfg.Region,
		"client.region":        cfg.Region,
	}
	h.tableConfig = maps.Clone(defaults)
	if cfg.Auth == nil {
		// Under Config.Auth the S3 API takes vended credentials only.
		h.tableConfig["s3.access-key-id"] = cfg.AccessKeyID
		h.tableConfig["s3.secret-access-key"] = cfg.SecretAccessKey
	}
	tc, err := json.Marshal(h.tableConfig)
	if err != nil {
		return nil, err
	}
	h.etagSalt = sha256.Sum256(tc)

	cr := configResponse{Defaults: defaults, Overrides: map[string]string{}, Endpoints: []string{}}
	for _, rt := range routes {
		if rt.advertised {
			cr.Endpoints = append(cr.Endpoints, rt.method+" "+rt.path)
		}
		// ServeMux wildcards are Go identifiers: {plan-id} is {planid}.
		pattern := strings.Replace(strings.Replace(rt.path, "/{prefix}", "", 1), "{plan-id}", "{planid}", 1)
		h.mux.HandleFunc(rt.method+" "+pattern, func(w http.ResponseWriter, r *http.Request) {
			rt.handle(h, w, r)
		})
	}
	if cfg.Auth != nil {
		cr.Endpoints = append(cr.Endpoints, "GET "+credentialsPath, "POST "+tokensPath)
		// Every method: ServeToken answers all but POST with 405.
		h.mux.HandleFunc(tokensPath, cfg.Auth.ServeToken)
	}
	if h.configBody, err = json.Marshal(cr); err != nil {
		return nil, err
	}
	h.mux.HandleFunc("GET /v1/config", h.getConfig)
	// Without a catch-all, ServeMux would answer unknown paths and methods
	// in plain text; engines expect an ErrorModel.
	h.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeErrorModel(w, r, &apiError{http.StatusNotFound, typeNotFound,
			"No route for request: " + r.Method + " " + r.URL.Path})
	})
	return h, nil
}

// ServeHTTP answers one catalog request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r, ok := h.authenticate(w, r); ok {
		h.mux.ServeHTTP(w, r)
	}
}

// getConfig answers GET /v1/config. Mink has one warehouse per cluster; the
// ?warehouse= a client sends (DuckDB sends the name it attaches) does not
// select anything and is ignored.
func (h *Handler) getConfig(w http.ResponseWriter, r *http.Request) {
	if wh := r.URL.Query().Get("warehouse"); wh != "" && wh != h.cfg.Warehouse {
		h.log.DebugContext(r.Context(), "catalog: client asked for another warehouse; serving ours",
			"asked", wh, "warehouse", h.cfg.Warehouse)
	}
	writeRawJSON(w, http.StatusOK, h.configBody)
}

// reportMetrics accepts a scan or commit report and discards it: Mink keeps
// no per-engine metrics, and refusing would only make clients log warnings.
func (h *Handler) reportMetrics(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, 1<<20))
	w.WriteHeader(http.StatusNoContent)
}
