// Package admin is Mink's admin HTTP API (docs/design.md §5, "Admin API"): table
// definitions, nodes, leases and partition progress, the overview that
// `mink status` and the console (package ui) show (Handler.Overview), and
// forwarding of /admin/v1/nodes/{id}/… to the node it names.
//
// The handlers (admin.go, overview.go) answer with the types of api.go, read
// through the queries of store.go (sql/, one statement a file), package
// tables and schemas and commit.CommittedOffsetsOf; each reads every table
// of an overview at once. Client calls the API with the same types: the
// `mink` CLI and `mink dev` use it.
package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/minkhq/mink/auth"
	"github.com/minkhq/mink/cluster"
	"github.com/minkhq/mink/kafka"
	"github.com/minkhq/mink/outage"
	"github.com/minkhq/mink/pgstore"
	"github.com/minkhq/mink/schemas"
	"github.com/minkhq/mink/tables"
)

// maxBody bounds a table definition (its schema included).
const maxBody = 1 << 20

// Handler serves /admin/v1/.
type Handler struct {
	pool  *pgxpool.Pool
	kafka *kafka.Client
	cfg   Config
	mux   *http.ServeMux
	peers *http.Transport // to the nodes requests are forwarded to
	// senders checks that a forwarded request's sender is a live member.
	senders *cluster.Senders
}

// New returns the admin handler. It panics on a cfg that Validate rejects
// (`mink serve` validates its settings before it starts anything).
func New(pool *pgxpool.Pool, kc *kafka.Client, cfg Config) *Handler {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	if cfg.Schemas == nil {
		cfg.Schemas = schemas.NewStore(pool, nil)
	}
	peers := http.DefaultTransport.(*http.Transport).Clone()
	// Nodes reach each other directly (as objects' forwards do); an
	// environment proxy is for the node's outbound traffic.
	peers.Proxy, peers.TLSClientConfig = nil, cfg.PeerTLS.Clone()
	h := &Handler{pool: pool, kafka: kc, cfg: cfg, mux: http.NewServeMux(), peers: peers,
		senders: cluster.NewSenders(pool, nil)}
	h.mux.HandleFunc("POST /admin/v1/tables", h.createTable)
	h.mux.HandleFunc("GET /admin/v1/tables", h.listTables)
	h.mux.HandleFunc("GET /admin/v1/tables/{name}", h.getTable)
	h.mux.HandleFunc("DELETE /admin/v1/tables/{name}", h.deleteTable)
	h.mux.HandleFunc("GET /admin/v1/tables/{name}/partitions", h.partitions)
	h.mux.HandleFunc("GET /admin/v1/tables/{name}/status", h.tableStatus)
	h.mux.HandleFunc("POST /admin/v1/tables/{name}/schema", h.alterTable)
	h.mux.HandleFunc("POST /admin/v1/tables/{name}/repair", h.repairTable)
	h.mux.HandleFunc("POST /admin/v1/tables/{name}/properties", h.setProperties)
	h.mux.HandleFunc("GET /admin/v1/nodes", serveRead(h, readNodes))
	h.mux.HandleFunc("GET /admin/v1/leases", serveRead(h, readLeases))
	h.mux.HandleFunc("GET /admin/v1/overview", h.overview)
	h.mux.HandleFunc("/admin/v1/nodes/{id}/{rest...}", h.forward)
	h.mux.HandleFunc("/admin/v1/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no such admin route: "+r.Method+" "+r.URL.Path)
	})
	return h
}

// ServeHTTP answers a request of the admin API. One marked forwarded
// (auth.ForwardedHeader) must carry a node's valid signature, or it
// answers 403.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	if _, marked := r.Header[auth.ForwardedHeader]; marked {
		node, err := auth.VerifyForward(h.cfg.ForwardKey, r, h.cfg.NodeID)
		if err != nil {
			h.cfg.Logger.Warn("admin: refused a request marked forwarded", "path", r.URL.Path, "remote", r.RemoteAddr, "err", err)
			writeError(w, http.StatusForbidden, "the request is marked forwarded but no node of this cluster signed it")
			return
		}
		live, err := h.senders.Live(ctx, node)
		switch {
		case err != nil:
			h.fail(w, pgstore.Unavailable(err))
			return
		case !live:
			h.cfg.Logger.Warn("admin: refused a request forwarded by a node that is not a live member", "path", r.URL.Path, "from", node, "remote", r.RemoteAddr)
			writeError(w, http.StatusForbidden, "the request is marked forwarded but no node of this cluster signed it")
			return
		}
		ctx = context.WithValue(ctx, forwardedByKey{}, node)
	}
	r = r.WithContext(ctx)
	if !h.authorize(w, r) {
		return
	}
	h.mux.ServeHTTP(w, r)
}

// authorize lets a request through when Config.Auth is nil or its bearer
// token is an admin principal's; else it answers 401 (with a challenge,
// RFC 6750 §3), 403 or 503, and returns false. A request forwarded to
// another node keeps its Authorization header: that node checks it too.
func (h *Handler) authorize(w http.ResponseWriter, r *http.Request) bool {
	if h.cfg.Auth == nil {
		return true
	}
	p, err := h.cfg.Auth.Bearer(r.Context(), r)
	switch {
	case auth.Unauthenticated(err):
		w.Header().Set("WWW-Authenticate", auth.Challenge(err))
		writeError(w, http.StatusUnauthorized, "not authorized: "+strings.TrimPrefix(err.Error(), "auth: ")+
			"; the admin API needs an admin principal's token (mink principal create NAME --admin; --credential ID:SECRET)")
		return false
	case err != nil:
		h.cfg.Logger.Warn("admin: authenticate", "err", err)
		writeError(w, http.StatusServiceUnavailable, "cannot check the token (Postgres): "+err.Error())
		return false
	case !p.Admin:
		writeError(w, http.StatusForbidden, "principal "+p.Name+" is not an admin; the admin API needs an admin principal")
		return false
	}
	return true
}

// Guard returns next behind the admin API's check (authorize): under
// Config.Auth a request needs an admin principal's bearer token (401
// without one, 403 for a non-admin's); with no Config.Auth it passes. For
// routes beside the API that expose the node, such as /debug/pprof/ (its
// cmdline shows the command line's flags, secrets included).
func (h *Handler) Guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h.authorize(w, r) {
			next.ServeHTTP(w, r)
		}
	})
}

// forwardedByKey is the context key of the node that forwarded a request
// (verified by ServeHTTP).
type forwardedByKey struct{}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	if code == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "2")
	}
	writeJSON(w, code, errorBody{Error: msg})
}

// fail maps an error to its status: 400 invalid, 404 missing, 409 exists,
// 503 Postgres or Kafka unreachable (outage.ErrUnavailable: kafka wraps it,
// pgstore.Unavailable marks the errors of this API's queries), else 500.
func (h *Handler) fail(w http.ResponseWriter, err error) {
	err = pgstore.Unavailable(err)
	code := http.StatusInternalServerError
	switch {
	case errors.Is(err, tables.ErrInvalid), errors.Is(err, tables.ErrBadName):
		code = http.StatusBadRequest
	case errors.Is(err, tables.ErrNotFound), errors.Is(err, kafka.ErrUnknownTopic):
		code = http.StatusNotFound
	case errors.Is(err, tables.ErrExists), errors.Is(err, tables.ErrLocationTaken):
		code = http.StatusConflict
	case errors.Is(err, outage.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
		code = http.StatusServiceUnavailable
	}
	if code >= 500 {
		h.cfg.Logger.Warn("admin: request failed", "err", err)
	}
	writeError(w, code, err.Error())
}

func (h *Handler) createTable(w http.ResponseWriter, r *http.Request) {
	dry := false
	if q := r.URL.Query().Get("dry_run"); q != "" {
		var err error
		if dry, err = strconv.ParseBool(q); err != nil {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("dry_run %q: must be true or false", q))
			return
		}
	}
	var def tables.Definition
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&def); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("table definition larger than %d bytes", maxBody))
			return
		}
		writeError(w, http.StatusBadRequest, "invalid table definition: "+err.Error())
		return
	}
	// Only white space may follow (dec.More is false before a stray '}'
	// or ']': found by fuzzing).
	if _, err := dec.Token(); err != io.EOF {
		writeError(w, http.StatusBadRequest, "invalid table definition: unexpected data after the JSON object")
		return
	}
	if err := tables.Check(&def); err != nil {
		h.fail(w, err)
		return
	}
	offs, err := h.kafka.ListOffsets(r.Context(), def.Topic)
	if err != nil {
		h.fail(w, err)
		return
	}
	plan, err := h.declare(r.Context(), &def, offs)
	if err != nil {
		h.fail(w, err)
		return
	}
	first, _, err := tables.Schemas(&def)
	if err != nil {
		h.fail(w, err)
		return
	}
	if dry {
		sc := first
		if plan != nil {
			sc = plan.Newest()
		}
		writeJSON(w, http.StatusOK, CreatePlan{Schema: sc, Plan: plan})
		return
	}
	starts := make([]tables.PartitionStart, 0, len(offs))
	for p, o := range offs {
		s := tables.PartitionStart{Partition: p, Offset: o.LogStart}
		if def.Start == "latest" {
			s.Offset = o.HighWatermark
		}
		starts = append(starts, s)
	}
	var then func(context.Context, pgx.Tx, *tables.Table) error
	if plan != nil {
		then = func(ctx context.Context, tx pgx.Tx, t *tables.Table) error {
			return schemas.ApplyPlan(ctx, tx, t, plan)
		}
	}
	t, err := tables.CreateThen(r.Context(), h.pool, h.cfg.Warehouse, def, starts, then)
	if err != nil {
		h.fail(w, err)
		return
	}
	h.cfg.Logger.Info("admin: table created", "table", t.FullName(), "topic", t.Topic, "partitions", len(starts))
	writeJSON(w, http.StatusCreated, CreatedTable{Table: t, Plan: plan})
}

func (h *Handler) listTables(w http.ResponseWriter, r *http.Request) {
	ts, err := tables.List(r.Context(), h.pool)
	if err != nil {
		h.fail(w, err)
		return
	}
	if ts == nil {
		ts = []*tables.Table{}
	}
	writeJSON(w, http.StatusOK, TableList{Tables: ts})
}

func (h *Handler) lookup(w http.ResponseWriter, r *http.Request) (*tables.Table, bool) {
	ns, name, err := tables.ParseName(r.PathValue("name"))
	if err != nil {
		h.fail(w, err)
		return nil, false
	}
	t, err := tables.GetByName(r.Context(), h.pool, ns, name)
	if err != nil {
		h.fail(w, err)
		return nil, false
	}
	return t, true
}

func (h *Handler) getTable(w http.ResponseWriter, r *http.Request) {
	if t, ok := h.lookup(w, r); ok {
		writeJSON(w, http.StatusOK, t)
	}
}

func (h *Handler) deleteTable(w http.ResponseWriter, r *http.Request) {
	ns, name, err := tables.ParseName(r.PathValue("name"))
	if err != nil {
		h.fail(w, err)
		return
	}
	if strings.HasSuffix(name, tables.DLQSuffix) {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("%s.%s is the dead-letter table of %s.%s: delete that table",
			ns, name, ns, strings.TrimSuffix(name, tables.DLQSuffix)))
		return
	}
	if err := tables.Delete(r.Context(), h.pool, ns, name); err != nil {
		h.fail(w, err)
		return
	}
	// Every node trusts its view of the live tables for LocationsTTL: once
	// it has passed since the commit, none serves the table's files, so
	// the answer means the data is offline (docs/design.md §5, Security).
	select {
	case <-time.After(tables.LocationsTTL):
	case <-r.Context().Done():
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (h *Handler) partitions(w http.ResponseWriter, r *http.Request) {
	t, ok := h.lookup(w, r)
	if !ok {
		return
	}
	parts, kerr, err := h.progress(r.Context(), t)
	if err != nil {
		h.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, TablePartitions{Table: t.FullName(), Partitions: parts, KafkaError: errorText(kerr)})
}

// progress returns the progress of each partition of t. kerr is set when
// Kafka could not be asked for its offsets (they are then 0).
func (h *Handler) progress(ctx context.Context, t *tables.Table) (parts []PartitionStatus, kerr, err error) {
	if parts, err = readProgress(ctx, h.pool, t); err != nil {
		return nil, nil, err
	}
	offs, kerr := h.kafka.ListOffsets(ctx, t.Topic)
	withKafkaOffsets(parts, offs)
	return parts, kerr, nil
}

// errorText is err's message, or "" for nil.
func errorText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func (h *Handler) tableStatus(w http.ResponseWriter, r *http.Request) {
	t, ok := h.lookup(w, r)
	if !ok {
		return
	}
	if t.DLQOf != nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("%s is a dead-letter table: ask for the status of the table it holds the dead letters of", t.FullName()))
		return
	}
	st, err := h.status(r.Context(), t)
	if err != nil {
		h.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

// overview answers GET /admin/v1/overview[?table=NS.NAME].
func (h *Handler) overview(w http.ResponseWriter, r *http.Request) {
	o, err := h.Overview(r.Context(), r.URL.Query().Get("table"))
	if err != nil {
		h.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, o)
}

// serveRead answers a GET with what read returns from the pool.
func serveRead[T any](h *Handler, read func(context.Context, tables.Querier) (T, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v, err := read(r.Context(), h.pool)
		if err != nil {
			h.fail(w, err)
			return
		}
		writeJSON(w, http.StatusOK, v)
	}
}

// forward answers /admin/v1/nodes/{id}/<what> locally when id is this node,
// else proxies it to that node's advertised URL.
func (h *Handler) forward(w http.ResponseWriter, r *http.Request) {
	id, rest := r.PathValue("id"), r.PathValue("rest")
	if id == h.cfg.NodeID {
		if h.cfg.Local != nil {
			if v, ok := h.cfg.Local(rest); ok {
				writeJSON(w, http.StatusOK, v)
				return
			}
		}
		writeError(w, http.StatusNotFound, fmt.Sprintf("node %s has no %q", id, rest))
		return
	}
	if by, ok := r.Context().Value(forwardedByKey{}).(string); ok {
		// The nodes' views of addresses differ for a moment (a node
		// restarted under another id): one hop only, never a loop.
		writeError(w, http.StatusNotFound, fmt.Sprintf("node %s forwarded a request for node %s to node %s", by, id, h.cfg.NodeID))
		return
	}
	addr, err := readNodeAddress(r.Context(), h.pool, id)
	if err != nil {
		if err := pgstore.Unavailable(err); errors.Is(err, outage.ErrUnavailable) {
			h.fail(w, err)
			return
		}
		writeError(w, http.StatusNotFound, "no live node "+id)
		return
	}
	target, err := url.Parse(addr)
	if err != nil || !strings.HasPrefix(target.Scheme, "http") {
		writeError(w, http.StatusBadGateway, "node "+id+" advertises a bad address "+addr)
		return
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			if len(h.cfg.ForwardKey) > 0 {
				auth.SignForward(h.cfg.ForwardKey, pr.Out, h.cfg.NodeID, id)
			}
		},
		Transport: h.peers,
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			writeError(w, http.StatusBadGateway, "node "+id+" did not answer: "+err.Error())
		},
	}
	proxy.ServeHTTP(w, r)
}
