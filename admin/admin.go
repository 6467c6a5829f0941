// Package admin is Mink's admin HTTP API (docs/design.md §5, "Admin API"): table
// definitions, nodes, leases and partition progress, and forwarding of
// /admin/v1/nodes/{id}/… to the node it names. The `mink` CLI calls it.
package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/minkhq/mink/kafka"
	"github.com/minkhq/mink/outage"
	"github.com/minkhq/mink/pgstore"
	"github.com/minkhq/mink/tables"
)

// maxBody bounds a table definition (its schema included).
const maxBody = 1 << 20

// Config wires the admin API.
type Config struct {
	NodeID    string
	Warehouse string
	// Local answers /admin/v1/nodes/{this node}/<what> (e.g. "cache").
	Local  func(what string) (any, bool)
	Logger *slog.Logger
}

// Handler serves /admin/v1/.
type Handler struct {
	pool  *pgxpool.Pool
	kafka *kafka.Client
	cfg   Config
	mux   *http.ServeMux
}

// New returns the admin handler.
func New(pool *pgxpool.Pool, kc *kafka.Client, cfg Config) *Handler {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	h := &Handler{pool: pool, kafka: kc, cfg: cfg, mux: http.NewServeMux()}
	h.mux.HandleFunc("POST /admin/v1/tables", h.createTable)
	h.mux.HandleFunc("GET /admin/v1/tables", h.listTables)
	h.mux.HandleFunc("GET /admin/v1/tables/{name}", h.getTable)
	h.mux.HandleFunc("DELETE /admin/v1/tables/{name}", h.deleteTable)
	h.mux.HandleFunc("GET /admin/v1/tables/{name}/partitions", h.partitions)
	h.mux.HandleFunc("GET /admin/v1/tables/{name}/status", h.tableStatus)
	h.mux.HandleFunc("GET /admin/v1/nodes", h.nodes)
	h.mux.HandleFunc("GET /admin/v1/leases", h.leases)
	h.mux.HandleFunc("/admin/v1/nodes/{id}/{rest...}", h.forward)
	h.mux.HandleFunc("/admin/v1/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no such admin route: "+r.Method+" "+r.URL.Path)
	})
	return h
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	h.mux.ServeHTTP(w, r.WithContext(ctx))
}

type errorBody struct {
	Error string `json:"error"`
}

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
	case errors.Is(err, tables.ErrExists):
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
	if dec.More() {
		writeError(w, http.StatusBadRequest, "invalid table definition: unexpected data after the JSON object")
		return
	}
	if _, _, err := tables.Schemas(&def); err != nil {
		h.fail(w, err)
		return
	}
	offs, err := h.kafka.ListOffsets(r.Context(), def.Topic)
	if err != nil {
		h.fail(w, err)
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
	t, err := tables.Create(r.Context(), h.pool, h.cfg.Warehouse, def, starts)
	if err != nil {
		h.fail(w, err)
		return
	}
	h.cfg.Logger.Info("admin: table created", "table", t.FullName(), "topic", t.Topic, "partitions", len(starts))
	writeJSON(w, http.StatusCreated, t)
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
	writeJSON(w, http.StatusOK, map[string]any{"tables": ts})
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
	w.WriteHeader(http.StatusNoContent)
}

// PartitionStatus is one partition's progress.
type PartitionStatus struct {
	Partition int32 `json:"partition"`
	// IndexedOffset is the end of the last indexed range.
	IndexedOffset int64 `json:"indexed_offset"`
	// CommittedOffset is the offset below which every record is in the
	// current snapshot of the table or of its dead-letter table (the
	// lesser of their content ends, docs/design.md §4.4), whether the
	// writer committed it or a zero-lag table load did.
	CommittedOffset int64 `json:"committed_offset"`
	LogStartOffset  int64 `json:"log_start_offset"`
	LastStable      int64 `json:"last_stable_offset"`
	HighWatermark   int64 `json:"high_watermark"`
	// Lag is last stable offset − indexed offset: records Kafka can serve
	// that are not indexed yet.
	Lag int64 `json:"lag"`
	// RecordsPerSecond is the indexing rate over the last minute.
	RecordsPerSecond float64 `json:"records_per_second"`
	Holder           *string `json:"holder"`
	Epoch            int64   `json:"epoch"`
}

func (h *Handler) partitions(w http.ResponseWriter, r *http.Request) {
	t, ok := h.lookup(w, r)
	if !ok {
		return
	}
	out, kerr, err := h.partitionStatus(r.Context(), t)
	if err != nil {
		h.fail(w, err)
		return
	}
	body := map[string]any{"table": t.FullName(), "partitions": out}
	if kerr != nil {
		body["kafka_error"] = kerr.Error()
	}
	writeJSON(w, http.StatusOK, body)
}

// partitionStatus returns the progress of each partition of t. kerr is set
// when Kafka could not be asked for its offsets (they are then 0).
func (h *Handler) partitionStatus(ctx context.Context, t *tables.Table) (out []PartitionStatus, kerr, err error) {
	rows, err := h.pool.Query(ctx, `
		SELECT p.partition,
		       coalesce((SELECT max(end_offset) FROM ranges g WHERE g.table_id = p.table_id AND g.partition = p.partition), p.start_offset),
		       coalesce((SELECT min(c.end_offset) FROM content_ends c
		                 WHERE c.table_id IN (p.table_id, (SELECT id FROM tables WHERE dlq_of = p.table_id))
		                   AND c.partition = p.partition
		                 HAVING count(*) = 2),
		                p.start_offset),
		       CASE WHEN l.expires_at > now() THEN l.holder END, l.epoch,
		       coalesce((SELECT sum(record_count) FROM ranges g WHERE g.table_id = p.table_id AND g.partition = p.partition
		                   AND g.created_at > now() - interval '1 minute'), 0) / 60.0
		FROM partitions p JOIN leases l ON l.table_id = p.table_id AND l.kind = 'partition' AND l.partition = p.partition
		WHERE p.table_id = $1 ORDER BY p.partition`, t.ID)
	if err != nil {
		return nil, nil, err
	}
	for rows.Next() {
		var s PartitionStatus
		if err := rows.Scan(&s.Partition, &s.IndexedOffset, &s.CommittedOffset, &s.Holder, &s.Epoch, &s.RecordsPerSecond); err != nil {
			rows.Close()
			return nil, nil, err
		}
		out = append(out, s)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	offs, kerr := h.kafka.ListOffsets(ctx, t.Topic)
	for i := range out {
		if o, ok := offs[out[i].Partition]; ok {
			out[i].LogStartOffset, out[i].LastStable, out[i].HighWatermark = o.LogStart, o.LastStable, o.HighWatermark
			out[i].Lag = max(0, o.LastStable-out[i].IndexedOffset)
		}
	}
	return out, kerr, nil
}

// TableStatus is the answer of GET /admin/v1/tables/{ns}.{name}/status:
// the table's progress and what its records did not fit.
type TableStatus struct {
	Table      string            `json:"table"`
	Partitions []PartitionStatus `json:"partitions"`
	// KafkaError is set when Kafka could not be asked for its offsets.
	KafkaError string `json:"kafka_error,omitempty"`
	// Writer is the holder of the table's writer lease (null when none).
	Writer *WriterStatus `json:"writer"`
	// UnknownFields counts the JSON fields, at any depth, of the records
	// indexed so far that match no column (left out of rows, or the reason
	// of a dead letter), counted once when their range was indexed, on
	// any node.
	UnknownFields UnknownFieldsStatus `json:"unknown_fields"`
	// DeadLetters is the number of rows of <name>~dlq in its live data
	// files, committed or about to be (rows dropped below Kafka's log start
	// no longer count).
	DeadLetters int64 `json:"dead_letters"`
}

// WriterStatus is the holder of a writer lease.
type WriterStatus struct {
	Holder    string    `json:"holder"`
	Epoch     int64     `json:"epoch"`
	ExpiresAt time.Time `json:"expires_at"`
}

// UnknownFieldsStatus is a count of unknown JSON fields and the first
// distinct field paths seen (at most 10; by partition, then first seen),
// e.g. "vbeln", "address.zip", "items.element.sku".
type UnknownFieldsStatus struct {
	Count    int64    `json:"count"`
	Examples []string `json:"examples"`
}

// maxUnknownExamples bounds UnknownFieldsStatus.Examples (as each
// partition's examples are bounded).
const maxUnknownExamples = 10

func (h *Handler) tableStatus(w http.ResponseWriter, r *http.Request) {
	t, ok := h.lookup(w, r)
	if !ok {
		return
	}
	if t.DLQOf != nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("%s is a dead-letter table: ask for the status of the table it holds the dead letters of", t.FullName()))
		return
	}
	ctx := r.Context()
	st := TableStatus{Table: t.FullName(), UnknownFields: UnknownFieldsStatus{Examples: []string{}}}
	parts, kerr, err := h.partitionStatus(ctx, t)
	if err != nil {
		h.fail(w, err)
		return
	}
	st.Partitions = parts
	if kerr != nil {
		st.KafkaError = kerr.Error()
	}
	var wr WriterStatus
	err = h.pool.QueryRow(ctx, `SELECT holder, epoch, expires_at FROM leases
		WHERE table_id = $1 AND kind = 'writer' AND holder IS NOT NULL AND expires_at > now()`, t.ID).Scan(&wr.Holder, &wr.Epoch, &wr.ExpiresAt)
	switch {
	case err == nil:
		st.Writer = &wr
	case !errors.Is(err, pgx.ErrNoRows):
		h.fail(w, err)
		return
	}
	rows, err := h.pool.Query(ctx, `SELECT field_count, examples FROM unknown_fields WHERE table_id = $1 ORDER BY partition`, t.ID)
	if err != nil {
		h.fail(w, err)
		return
	}
	for rows.Next() {
		var n int64
		var examples []string
		if err := rows.Scan(&n, &examples); err != nil {
			rows.Close()
			h.fail(w, err)
			return
		}
		st.UnknownFields.Count += n
		for _, e := range examples {
			if len(st.UnknownFields.Examples) < maxUnknownExamples && !slices.Contains(st.UnknownFields.Examples, e) {
				st.UnknownFields.Examples = append(st.UnknownFields.Examples, e)
			}
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		h.fail(w, err)
		return
	}
	err = h.pool.QueryRow(ctx, `SELECT coalesce(sum(record_count), 0)::bigint FROM data_files
		WHERE table_id = (SELECT id FROM tables WHERE dlq_of = $1) AND removed_snapshot_id IS NULL`, t.ID).Scan(&st.DeadLetters)
	if err != nil {
		h.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

// NodeStatus is a row of GET /admin/v1/nodes.
type NodeStatus struct {
	ID           string    `json:"id"`
	AdvertiseURL string    `json:"address"`
	Roles        []string  `json:"roles"`
	ExpiresAt    time.Time `json:"expires_at"`
	Leases       []string  `json:"leases"`
}

func (h *Handler) nodes(w http.ResponseWriter, r *http.Request) {
	rows, err := h.pool.Query(r.Context(), `
		SELECT n.id, n.advertise_url, n.roles, n.expires_at,
		       coalesce(array_agg(l.scope ORDER BY l.scope) FILTER (WHERE l.scope IS NOT NULL), '{}')
		FROM nodes n LEFT JOIN leases l ON l.holder = n.id AND l.expires_at > now()
		WHERE n.expires_at > now()
		GROUP BY n.id ORDER BY n.id`)
	if err != nil {
		h.fail(w, err)
		return
	}
	defer rows.Close()
	out := []NodeStatus{}
	for rows.Next() {
		var n NodeStatus
		if err := rows.Scan(&n.ID, &n.AdvertiseURL, &n.Roles, &n.ExpiresAt, &n.Leases); err != nil {
			h.fail(w, err)
			return
		}
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		h.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"nodes": out})
}

// LeaseStatus is a row of GET /admin/v1/leases.
type LeaseStatus struct {
	Scope     string     `json:"scope"`
	Table     string     `json:"table"`
	Kind      string     `json:"kind"`
	Partition *int32     `json:"partition,omitempty"`
	Holder    *string    `json:"holder"`
	Epoch     int64      `json:"epoch"`
	ExpiresAt *time.Time `json:"expires_at"`
}

func (h *Handler) leases(w http.ResponseWriter, r *http.Request) {
	rows, err := h.pool.Query(r.Context(), `
		SELECT l.scope, t.namespace || '.' || t.name, l.kind, l.partition,
		       CASE WHEN l.expires_at > now() THEN l.holder END, l.epoch, l.expires_at
		FROM leases l JOIN tables t ON t.id = l.table_id
		ORDER BY t.namespace, t.name, l.kind DESC, l.partition`)
	if err != nil {
		h.fail(w, err)
		return
	}
	defer rows.Close()
	out := []LeaseStatus{}
	for rows.Next() {
		var l LeaseStatus
		if err := rows.Scan(&l.Scope, &l.Table, &l.Kind, &l.Partition, &l.Holder, &l.Epoch, &l.ExpiresAt); err != nil {
			h.fail(w, err)
			return
		}
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		h.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"leases": out})
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
	var addr string
	err := h.pool.QueryRow(r.Context(), `SELECT advertise_url FROM nodes WHERE id = $1 AND expires_at > now()`, id).Scan(&addr)
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
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ErrorHandler = func(w http.ResponseWriter, _ *http.Request, err error) {
		writeError(w, http.StatusBadGateway, "node "+id+" did not answer: "+err.Error())
	}
	proxy.ServeHTTP(w, r)
}
