package catalog

import (
	"bytes"
	"cmp"
	"context"
	_ "embed"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/minkhq/mink/codec"
	"github.com/minkhq/mink/datafile"
	"github.com/minkhq/mink/icebergmeta"
	"github.com/minkhq/mink/tables"
)

// Server-side scan planning: the REST spec's planTableScan,
// fetchPlanningResult, cancelPlanning and fetchScanTasks
// (open-api/rest-catalog-open-api.yaml). A plan is computed when it is
// asked for and answered "completed" at once; nothing is kept between
// requests. The plan id and the plan-task tokens carry what is needed to
// compute the plan (or one page of it) again, on any node.

var (
	//go:embed sql/plan_files.sql
	planFilesSQL string
	//go:embed sql/plan_totals.sql
	planTotalsSQL string
)

// Error types of the planning 404s (the spec's; iceberg-go tells an expired
// plan or task from a missing table by them).
const (
	typeNoSuchPlanID   = "NoSuchPlanIdException"
	typeNoSuchPlanTask = "NoSuchPlanTaskException"
)

const (
	planPath   = "/v1/{prefix}/namespaces/{namespace}/tables/{table}/plan"
	planIDPath = planPath + "/{plan-id}"
	tasksPath  = "/v1/{prefix}/namespaces/{namespace}/tables/{table}/tasks"
)

// planRequest is the spec's PlanTableScanRequest.
type planRequest struct {
	SnapshotID        *int64          `json:"snapshot-id"`
	Select            columnNames     `json:"select"`
	Filter            json.RawMessage `json:"filter"`
	CaseSensitive     *bool           `json:"case-sensitive"`
	UseSnapshotSchema *bool           `json:"use-snapshot-schema"`
	StartSnapshotID   *int64          `json:"start-snapshot-id"`
	EndSnapshotID     *int64          `json:"end-snapshot-id"`
	StatsFields       columnNames     `json:"stats-fields"`
	MinRowsRequested  *int64          `json:"min-rows-requested"`
}

// columnNames is a request's list of column names (select,
// stats-fields). Every entry must be a JSON string: encoding/json would
// decode a null entry as "", which then reads as a column named "".
type columnNames []string

func (c *columnNames) UnmarshalJSON(b []byte) error {
	var raw []*string
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	if raw == nil {
		*c = nil
		return nil
	}
	out := make(columnNames, len(raw))
	for i, s := range raw {
		if s == nil {
			return fmt.Errorf("select and stats-fields entries must be strings (column names), not null (entry %d)", i)
		}
		out[i] = *s
	}
	*c = out
	return nil
}

// planSpec is everything a plan is a function of. It travels (JSON,
// base64url) as the plan id, and with a page's path range as a plan-task
// token. Neither is signed: every request checks the caller's access to
// the table in its path, and a spec names that table by its row id, so a
// forged one plans nothing the caller could not plan itself; a table
// dropped and created again has a new row id, so old ids answer 404.
type planSpec struct {
	Version    int             `json:"v"`
	TableID    int64           `json:"t"`
	SnapshotID int64           `json:"s"`
	Filter     json.RawMessage `json:"f,omitempty"`
	// CaseInsensitive binds the filter's names ignoring case.
	CaseInsensitive bool `json:"ci,omitempty"`
	// SchemaID is the schema the filter binds to.
	SchemaID int `json:"sc"`
	// Stats are the field ids whose statistics each task carries.
	Stats []int `json:"st,omitempty"`
	// Manifests: planned from the manifests (the rows were not trusted).
	Manifests bool `json:"m,omitempty"`
	// After and Last bound a plan task's page (After exclusive, Last
	// inclusive); a plan id has neither.
	After *cursor `json:"a,omitempty"`
	Last  *cursor `json:"l,omitempty"`
}

const planSpecVersion = 1

// cursor is a file's place in a plan's order: partition, start offset,
// then key (bytewise), for files planned from the rows (so that a page is
// an index range of data_files); the key (the full location) alone for
// files planned from the manifests.
type cursor struct {
	P int32  `json:"p,omitempty"`
	S int64  `json:"s,omitempty"`
	K string `json:"k,omitempty"`
	// Z places the cursor after every key of (P, S): a page end cut from
	// partition and start offset alone.
	Z bool `json:"z,omitempty"`
}

func (a cursor) compare(b cursor) int {
	if c := cmp.Compare(a.P, b.P); c != 0 {
		return c
	}
	if c := cmp.Compare(a.S, b.S); c != 0 {
		return c
	}
	switch {
	case a.Z && b.Z:
		return 0
	case a.Z:
		return 1
	case b.Z:
		return -1
	}
	return strings.Compare(a.K, b.K)
}

// planResult is a plan: its files, or (an unfiltered plan of many files
// from the rows) the ends of its pages, the last one past every file.
type planResult struct {
	files []plannedFile
	ends  []cursor
}

// inPage reports whether c is within spec's page (all of the plan for a
// plan id).
func (spec *planSpec) inPage(c cursor) bool {
	return (spec.After == nil || c.compare(*spec.After) > 0) && (spec.Last == nil || c.compare(*spec.Last) <= 0)
}

func (s *planSpec) encode() string {
	b, _ := json.Marshal(s) // only strings, numbers and raw JSON: always marshals
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodePlanSpec returns the spec of a plan id or plan-task token, or
// false for anything this version did not make.
func decodePlanSpec(s string) (*planSpec, bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, false
	}
	var ps planSpec
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if d.Decode(&ps) != nil || ps.Version != planSpecVersion || ps.TableID <= 0 {
		return nil, false
	}
	return &ps, true
}

// planTableScan answers POST /v1/namespaces/{namespace}/tables/{table}/plan
// (the spec's planTableScan) with a completed plan: file-scan-tasks inline
// when the plan has at most Config.PlanTaskFiles files, else plan-tasks of
// that many files each. Without a snapshot-id it plans the snapshot a table
// load would answer now (Kafka's tail included, docs/design.md §4.4).
//
// Errors: 400 for a body that does not parse, an incremental scan
// (start-snapshot-id), a snapshot the table does not have, a select or
// stats field that names no column, a filter that does not bind; 404 as
// a table load.
func (h *Handler) planTableScan(w http.ResponseWriter, r *http.Request) {
	ns, name, ok := h.table(w, r)
	if !ok {
		return
	}
	if !allowed(r, ns, name) {
		h.writeError(w, r, noSuchTable(ns, name))
		return
	}
	var req *planRequest
	err := decodeBody(r, &req)
	if err == nil && req == nil {
		// The request body is an object (PlanTableScanRequest), not null.
		err = errors.New("the body is null, not an object")
	}
	if err != nil {
		h.writeError(w, r, badRequest("Malformed PlanTableScanRequest: %v", err))
		return
	}
	if req.StartSnapshotID != nil || req.EndSnapshotID != nil {
		h.writeError(w, r, badRequest("Incremental scan planning (start-snapshot-id, end-snapshot-id) is not supported; "+
			"plan one snapshot with snapshot-id, or plan on the client"))
		return
	}
	committed, ok := h.loadCommitted(w, r, ns, name)
	if !ok {
		return
	}
	t := committed
	if req.SnapshotID == nil {
		// Plan what a load would answer: every record acknowledged before.
		if t, ok = h.loadNow(w, r, ns, name, committed); !ok {
			return
		}
	}
	md, err := table.ParseMetadataBytes(t.Metadata)
	if err != nil {
		h.writeError(w, r, fmt.Errorf("parse metadata %s: %w", t.MetadataLocation, err), logAttrs(ns, name)...)
		return
	}
	snap := md.CurrentSnapshot()
	if req.SnapshotID != nil {
		if snap = md.SnapshotByID(*req.SnapshotID); snap == nil {
			h.writeError(w, r, badRequest("Table %s.%s has no snapshot %d", joinLevels(ns), name, *req.SnapshotID))
			return
		}
	}
	schema := md.CurrentSchema()
	if req.UseSnapshotSchema != nil && *req.UseSnapshotSchema && snap != nil && snap.SchemaID != nil {
		for _, s := range md.Schemas() {
			if s.ID == *snap.SchemaID {
				schema = s
			}
		}
	}
	caseInsensitive := req.CaseSensitive != nil && !*req.CaseSensitive
	if name, ok := unknownColumn(schema, req.Select, caseInsensitive); ok {
		h.writeError(w, r, badRequest("Cannot select column %q: table %s.%s (schema %d) has no such column",
			name, joinLevels(ns), t.Name, schema.ID))
		return
	}
	if snap == nil {
		// No snapshot yet: nothing to read.
		writeRawJSON(w, http.StatusOK, []byte(`{"status":"completed","plan-id":"`+
			(&planSpec{Version: planSpecVersion, TableID: t.ID, SnapshotID: -1}).encode()+`","file-scan-tasks":[]}`))
		return
	}
	spec := &planSpec{Version: planSpecVersion, TableID: t.ID, SnapshotID: snap.SnapshotID, SchemaID: schema.ID,
		CaseInsensitive: caseInsensitive}
	if f := bytes.TrimSpace(req.Filter); len(f) > 0 && !bytes.Equal(f, []byte("null")) {
		if spec.Filter, err = constantsAsBooleans(f); err != nil {
			h.writeError(w, r, badRequest("Invalid filter: %v", err))
			return
		}
	}
	for _, name := range req.StatsFields {
		f, ok := schema.FindFieldByName(name)
		if !ok && spec.CaseInsensitive {
			f, ok = schema.FindFieldByNameCaseInsensitive(name)
		}
		if !ok {
			h.writeError(w, r, badRequest("Unknown stats field %q", name))
			return
		}
		spec.Stats = append(spec.Stats, f.ID)
	}
	res, err := h.plan(r.Context(), t, md, spec, true)
	if err != nil {
		h.writeError(w, r, err, logAttrs(ns, name)...)
		return
	}
	writeRawJSON(w, http.StatusOK, h.planBody(spec, res, true))
}

// metadataColumns are the names the Iceberg spec reserves for metadata
// columns ("Reserved Field IDs"): an engine may select them (Spark's
// _file, _pos) though no table schema has them.
var metadataColumns = []string{"_file", "_pos", "_deleted", "_spec_id", "_partition",
	"_row_id", "_last_updated_sequence_number", "_change_type", "_change_ordinal", "_commit_snapshot_id"}

// unknownColumn returns the first name of sel that names no field of
// schema (a dotted path for a nested one, e.g. _kafka.offset), ignoring
// case when caseInsensitive, and true; false when every name is known.
// "*" (all columns, iceberg-go's own spelling) and the reserved metadata
// columns are known.
func unknownColumn(schema *iceberg.Schema, sel []string, caseInsensitive bool) (string, bool) {
	for _, name := range sel {
		if name == "*" {
			continue
		}
		if _, ok := schema.FindFieldByName(name); ok {
			continue
		}
		if caseInsensitive {
			if _, ok := schema.FindFieldByNameCaseInsensitive(name); ok {
				continue
			}
		}
		if slices.ContainsFunc(metadataColumns, func(m string) bool {
			return m == name || caseInsensitive && strings.EqualFold(m, name)
		}) {
			continue
		}
		return name, true
	}
	return "", false
}

// planBody is a completed plan (with its plan id for planTableScan, not
// for fetchPlanningResult): its files inline, or plan tasks of
// Config.PlanTaskFiles files each, cut at file keys.
func (h *Handler) planBody(spec *planSpec, res planResult, withID bool) []byte {
	var b bytes.Buffer
	b.WriteString(`{"status":"completed",`)
	if withID {
		b.WriteString(`"plan-id":"`)
		b.WriteString(spec.encode())
		b.WriteString(`",`)
	}
	files := res.files
	ends := res.ends
	if n := h.cfg.PlanTaskFiles; ends == nil && len(files) > n {
		for i := 0; i < len(files); i += n {
			ends = append(ends, files[min(i+n, len(files))-1].cur)
		}
	}
	if ends != nil {
		b.WriteString(`"plan-tasks":[`)
		var after *cursor
		for i, last := range ends {
			page := *spec
			page.After, page.Last = after, &last
			if i > 0 {
				b.WriteByte(',')
			}
			tok, _ := json.Marshal(page.encode())
			b.Write(tok)
			after = &last
		}
		b.WriteString("]}")
	} else {
		writeTasks(&b, spec, files)
		b.WriteString("}")
	}
	return b.Bytes()
}

// fetchPlanningResult answers GET …/plan/{plan-id}: the plan computed
// again from its id (plans are never left "submitted", so clients only
// call this after a retry). 404 NoSuchPlanIdException for an id this
// table did not issue.
func (h *Handler) fetchPlanningResult(w http.ResponseWriter, r *http.Request) {
	t, md, spec, ok := h.planOf(w, r, r.PathValue("planid"), typeNoSuchPlanID)
	if !ok {
		return
	}
	if spec.After != nil || spec.Last != nil {
		h.writeError(w, r, &apiError{http.StatusNotFound, typeNoSuchPlanID, "No such plan id"})
		return
	}
	if spec.SnapshotID < 0 {
		writeRawJSON(w, http.StatusOK, []byte(`{"status":"completed","file-scan-tasks":[]}`))
		return
	}
	res, err := h.plan(r.Context(), t, md, spec, false)
	if err != nil {
		h.writeError(w, r, err, logAttrs(t.Namespace, t.Name)...)
		return
	}
	// The spec's fetchPlanningResult has no plan-id.
	writeRawJSON(w, http.StatusOK, h.planBody(spec, res, false))
}

// cancelPlanning answers DELETE …/plan/{plan-id}: 204, there is nothing to
// free; 404 NoSuchPlanIdException for an id this table did not issue.
func (h *Handler) cancelPlanning(w http.ResponseWriter, r *http.Request) {
	if _, _, _, ok := h.planOf(w, r, r.PathValue("planid"), typeNoSuchPlanID); ok {
		w.WriteHeader(http.StatusNoContent)
	}
}

// fetchScanTasks answers POST …/tasks (the spec's fetchScanTasks) with the
// file-scan-tasks of one plan task. 404 NoSuchPlanTaskException for a
// token this table did not issue.
func (h *Handler) fetchScanTasks(w http.ResponseWriter, r *http.Request) {
	var req struct {
		PlanTask string `json:"plan-task"`
	}
	if err := decodeBody(r, &req); err != nil {
		h.writeError(w, r, badRequest("Malformed FetchScanTasksRequest: %v", err))
		return
	}
	if req.PlanTask == "" {
		h.writeError(w, r, badRequest("Malformed FetchScanTasksRequest: missing plan-task"))
		return
	}
	t, md, spec, ok := h.planOf(w, r, req.PlanTask, typeNoSuchPlanTask)
	if !ok {
		return
	}
	if spec.Last == nil {
		h.writeError(w, r, &apiError{http.StatusNotFound, typeNoSuchPlanTask, "No such plan task"})
		return
	}
	res, err := h.plan(r.Context(), t, md, spec, false)
	if err != nil {
		h.writeError(w, r, err, logAttrs(t.Namespace, t.Name)...)
		return
	}
	var b bytes.Buffer
	b.WriteByte('{')
	writeTasks(&b, spec, res.files)
	b.WriteByte('}')
	writeRawJSON(w, http.StatusOK, b.Bytes())
}

// planOf checks the request's table and the plan id or token s: the table
// must be visible and be the one s was issued for. It answers 404 of type
// typ (or the table's error) and returns false otherwise.
func (h *Handler) planOf(w http.ResponseWriter, r *http.Request, s, typ string) (Table, table.Metadata, *planSpec, bool) {
	ns, name, ok := h.table(w, r)
	if !ok {
		return Table{}, nil, nil, false
	}
	if !allowed(r, ns, name) {
		h.writeError(w, r, noSuchTable(ns, name))
		return Table{}, nil, nil, false
	}
	t, ok := h.loadCommitted(w, r, ns, name)
	if !ok {
		return Table{}, nil, nil, false
	}
	spec, ok := decodePlanSpec(s)
	if !ok || spec.TableID != t.ID {
		what := "plan id"
		if typ == typeNoSuchPlanTask {
			what = "plan task"
		}
		h.writeError(w, r, &apiError{http.StatusNotFound, typ,
			fmt.Sprintf("No such %s for table %s.%s", what, joinLevels(ns), name)})
		return Table{}, nil, nil, false
	}
	md, err := table.ParseMetadataBytes(t.Metadata)
	if err != nil {
		h.writeError(w, r, fmt.Errorf("parse metadata %s: %w", t.MetadataLocation, err), logAttrs(ns, name)...)
		return Table{}, nil, nil, false
	}
	if spec.SnapshotID >= 0 && md.SnapshotByID(spec.SnapshotID) == nil {
		h.writeError(w, r, &apiError{http.StatusNotFound, typ,
			fmt.Sprintf("The snapshot of this plan is no longer in table %s.%s", joinLevels(ns), name)})
		return Table{}, nil, nil, false
	}
	return t, md, spec, true
}

// plannedFile is one data file of a plan.
type plannedFile struct {
	// cur is the file's place in the plan's order.
	cur       cursor
	path      string // full location
	partition int32
	specID    int
	size      int64
	stats     datafile.Stats
}

// plan returns the data files of spec's snapshot that may hold rows its
// filter matches, ordered by path, within spec's page (After, Last).
// From the file rows in Postgres when the snapshot is on the main branch
// and the rows agree with its summary (record and file totals; checked
// when decide is set, and the choice recorded in spec.Manifests);
// otherwise from the manifests with iceberg-go's planner.
func (h *Handler) plan(ctx context.Context, t Table, md table.Metadata, spec *planSpec, decide bool) (planResult, error) {
	var schema *iceberg.Schema
	for _, s := range md.Schemas() {
		if s.ID == spec.SchemaID {
			schema = s
		}
	}
	if schema == nil {
		return planResult{}, badRequest("Table has no schema %d", spec.SchemaID)
	}
	var filter iceberg.BooleanExpression = iceberg.AlwaysTrue{}
	if spec.Filter != nil {
		var err error
		// With a schema, ParseExpr types literals by their field but finds
		// fields case-sensitively; a case-insensitive plan parses without
		// one, and binding (newPruner) finds the fields ignoring case and
		// converts the literals to their types.
		parseWith := schema
		if spec.CaseInsensitive {
			parseWith = nil
		}
		if filter, err = iceberg.ParseExpr(spec.Filter, parseWith); err != nil {
			return planResult{}, badRequest("Invalid filter: %v", err)
		}
	}
	pr, err := newPruner(schema, filter, !spec.CaseInsensitive)
	if err != nil {
		return planResult{}, badRequest("Invalid filter: %v", err)
	}
	snap := md.SnapshotByID(spec.SnapshotID)
	main := onMain(md, snap.SnapshotID)
	if decide {
		spec.Manifests = !main
		if !spec.Manifests {
			n := h.cfg.PlanTaskFiles
			tot, err := h.totals.get(ctx, h.store, t.ID, snap.SnapshotID, snap.SequenceNumber, n)
			if err != nil {
				return planResult{}, err
			}
			files, records, ends := tot.files, tot.records, tot.ends
			sum := snap.Summary
			if sum == nil || sum.Properties[totalDataFiles] != strconv.FormatInt(files, 10) ||
				sum.Properties[totalRecords] != strconv.FormatInt(records, 10) {
				h.log.InfoContext(ctx, "catalog: file rows disagree with the snapshot summary; planning from manifests",
					"table", t.ID, "snapshot", snap.SnapshotID, "files", files, "records", records)
				spec.Manifests = true
			} else if _, all := pr.expr.(iceberg.AlwaysTrue); all && len(spec.Stats) == 0 && files > int64(n) {
				// Every file, in pages: no need to list them here.
				return planResult{ends: ends}, nil
			}
		}
	} else if !spec.Manifests && !main {
		spec.Manifests = true // no longer on main (cannot happen to a snapshot of main): be right anyway
	}
	var res planResult
	if spec.Manifests {
		res.files, err = h.planManifests(ctx, t, md, spec, filter)
	} else {
		res.files, err = h.store.planFiles(ctx, t.ID, snap.SequenceNumber, spec, bound(pr.expr), pr)
	}
	return res, err
}

// Snapshot summary keys (Iceberg spec, "Optional Snapshot Summary Fields").
const (
	totalDataFiles = "total-data-files"
	totalRecords   = "total-records"
)

// onMain reports whether snapshot id is, or was, the head of the main
// branch: the current snapshot or in the snapshot-log (Iceberg spec,
// "Table Metadata": snapshot-log records main's current snapshot changes;
// Mink keeps the entries of every retained snapshot, docs/design.md §4.6).
// Its parent chain is no test: thinning leaves gaps in it. A tag's own
// snapshot is never on main.
func onMain(md table.Metadata, id int64) bool {
	if head := md.CurrentSnapshot(); head != nil && head.SnapshotID == id {
		return true
	}
	for e := range md.SnapshotLogs() {
		if e.SnapshotID == id {
			return true
		}
	}
	return false
}

// totals are a snapshot's totals from the rows, with its page ends.
type totals struct {
	files, records int64
	ends           []cursor
}

// totalsCache keeps the totals of the snapshots planned lately. A
// snapshot's rows do not change while it is in the table (a later
// snapshot that removes a file marks it, it does not delete it), so its
// totals need counting once per node, not on every plan.
type totalsCache struct {
	mu sync.Mutex
	m  map[[2]int64]totals // by table id and snapshot id
}

// maxCachedTotals bounds the cache; it is emptied when full.
const maxCachedTotals = 4096

func (c *totalsCache) get(ctx context.Context, s *store, tableID, snapshotID, seq int64, perPage int) (totals, error) {
	k := [2]int64{tableID, snapshotID}
	c.mu.Lock()
	t, ok := c.m[k]
	c.mu.Unlock()
	if ok {
		return t, nil
	}
	var err error
	if t.files, t.records, t.ends, err = s.planTotals(ctx, tableID, seq, perPage); err != nil {
		return t, err
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxCachedTotals {
		c.m = map[[2]int64]totals{}
	}
	c.m[k] = t
	c.mu.Unlock()
	return t, nil
}

// planTotals counts the files and records of a snapshot from the rows,
// and cuts them into pages of about perPage files (plan_totals.sql): it
// returns the pages' ends, the last one past every file.
func (s *store) planTotals(ctx context.Context, tableID, seq int64, perPage int) (files, records int64, ends []cursor, err error) {
	var ps []int32
	var ss []int64
	err = s.conn(ctx, func(ctx context.Context, c *pgxpool.Conn) error {
		return c.QueryRow(ctx, planTotalsSQL, tableID, seq, perPage).Scan(&files, &records, &ps, &ss)
	})
	for i := range ps {
		e := cursor{P: ps[i], S: ss[i], Z: true}
		if len(ends) == 0 || ends[len(ends)-1] != e { // files of one (partition, start) share a page
			ends = append(ends, e)
		}
	}
	ends = append(ends, cursor{P: math.MaxInt32, S: math.MaxInt64, Z: true})
	return files, records, ends, err
}

// planFiles reads the files of a snapshot from the rows, within the spans
// of sp and spec's page, and keeps those pr may match. Statistics are
// decoded only when the filter or the answer needs them.
func (s *store) planFiles(ctx context.Context, tableID, seq int64, spec *planSpec, sp spans, pr *pruner) ([]plannedFile, error) {
	if sp.offset.empty || sp.partition.empty {
		return nil, nil
	}
	_, all := pr.expr.(iceberg.AlwaysTrue)
	withStats := !all || len(spec.Stats) > 0
	// The page, coarsely: by (partition, start offset), an index range.
	from := cursor{P: math.MinInt32, S: math.MinInt64}
	to := cursor{P: math.MaxInt32, S: math.MaxInt64}
	if spec.After != nil {
		from = *spec.After
	}
	if spec.Last != nil {
		to = *spec.Last
	}
	var out []plannedFile
	err := s.conn(ctx, func(ctx context.Context, c *pgxpool.Conn) error {
		rows, err := c.Query(ctx, planFilesSQL, tableID, seq, sp.offset.lo, sp.offset.hi,
			sp.partition.lo, sp.partition.hi, from.P, from.S, to.P, to.S, withStats)
		if err != nil {
			return err
		}
		defer rows.Close()
		var (
			key   string
			f     plannedFile
			stats []byte
		)
		for rows.Next() {
			f.stats = datafile.Stats{}
			if err := rows.Scan(&key, &f.partition, &f.cur.S, &f.size, &f.stats.RecordCount, &stats); err != nil {
				return err
			}
			f.cur.P, f.cur.K = f.partition, key
			if !spec.inPage(f.cur) {
				continue
			}
			if withStats {
				if err := json.Unmarshal(stats, &f.stats); err != nil {
					return fmt.Errorf("data file %s: stats: %w", key, err)
				}
			}
			ok, err := pr.mightMatch(&f.stats)
			if err != nil {
				return fmt.Errorf("data file %s: %w", key, err)
			}
			if ok {
				f.path = s.prefix + key
				out = append(out, f)
			}
		}
		return rows.Err()
	})
	return out, err
}

// planManifests plans spec's snapshot with iceberg-go over the manifests,
// read from Postgres, and keeps spec's page.
func (h *Handler) planManifests(ctx context.Context, t Table, md table.Metadata, spec *planSpec, filter iceberg.BooleanExpression) ([]plannedFile, error) {
	fsys := &pgIO{ctx: ctx, s: h.store}
	tbl := table.New(append(slices.Clone(t.Namespace), t.Name), md, t.MetadataLocation,
		func(context.Context) (iceio.IO, error) { return fsys, nil }, nil)
	scan := tbl.Scan(table.WithSnapshotID(spec.SnapshotID), table.WithRowFilter(filter),
		table.WithCaseSensitive(!spec.CaseInsensitive))
	defer scan.Close()
	tasks, err := scan.PlanFiles(ctx)
	if err != nil {
		return nil, fmt.Errorf("plan from manifests: %w", err)
	}
	out := make([]plannedFile, 0, len(tasks))
	for _, task := range tasks {
		d := task.File
		if !spec.inPage(cursor{K: d.FilePath()}) {
			continue // another page's
		}
		var p int32
		if v, ok := d.Partition()[icebergmeta.PartitionFieldID].(int32); ok {
			p = v
		}
		out = append(out, plannedFile{cur: cursor{K: d.FilePath()}, path: d.FilePath(), partition: p, specID: int(d.SpecID()), size: d.FileSizeBytes(),
			stats: datafile.Stats{RecordCount: d.Count(), ColumnSizes: d.ColumnSizes(), ValueCounts: d.ValueCounts(),
				NullValueCounts: d.NullValueCounts(), NaNValueCounts: d.NaNValueCounts(),
				LowerBounds: d.LowerBoundValues(), UpperBounds: d.UpperBoundValues(), SplitOffsets: d.SplitOffsets()}})
	}
	slices.SortFunc(out, func(a, b plannedFile) int { return a.cur.compare(b.cur) })
	return out, nil
}

// pgIO is an iceberg-go IO over the metadata files stored in Postgres
// (read-only): what the manifest planner reads.
type pgIO struct {
	ctx context.Context
	s   *store
}

func (p *pgIO) Open(name string) (iceio.File, error) {
	key, ok := strings.CutPrefix(name, p.s.prefix)
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	var content []byte
	err := p.s.conn(p.ctx, func(ctx context.Context, c *pgxpool.Conn) error {
		f, err := tables.ReadMetadataFile(ctx, c, key)
		content = f.Content
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return &memFile{Reader: bytes.NewReader(content), name: name, size: int64(len(content))}, nil
}

func (p *pgIO) Remove(name string) error {
	return &fs.PathError{Op: "remove", Path: name, Err: fs.ErrPermission}
}

// memFile is a metadata file's content as an iceberg-go file.
type memFile struct {
	*bytes.Reader
	name string
	size int64
}

func (f *memFile) Close() error               { return nil }
func (f *memFile) Stat() (fs.FileInfo, error) { return f, nil }
func (f *memFile) Name() string               { return f.name }
func (f *memFile) Size() int64                { return f.size }
func (f *memFile) Mode() fs.FileMode          { return 0o444 }
func (f *memFile) ModTime() time.Time         { return time.Time{} }
func (f *memFile) IsDir() bool                { return false }
func (f *memFile) Sys() any                   { return nil }

// writeTasks writes "file-scan-tasks":[…] for files: the spec's
// FileScanTask with its DataFile (bounds hex-encoded, as Java's
// ContentFileParser writes them), statistics only for spec.Stats, no
// residual filter (the client applies its filter to every row).
func writeTasks(b *bytes.Buffer, spec *planSpec, files []plannedFile) {
	b.WriteString(`"file-scan-tasks":[`)
	for i := range files {
		f := &files[i]
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"data-file":{"spec-id":`)
		b.WriteString(strconv.Itoa(f.specID))
		b.WriteString(`,"content":"data","file-path":`)
		p, _ := json.Marshal(f.path)
		b.Write(p)
		b.WriteString(`,"file-format":"parquet","partition":[`)
		b.WriteString(strconv.FormatInt(int64(f.partition), 10))
		b.WriteString(`],"file-size-in-bytes":`)
		b.WriteString(strconv.FormatInt(f.size, 10))
		b.WriteString(`,"record-count":`)
		b.WriteString(strconv.FormatInt(f.stats.RecordCount, 10))
		if len(spec.Stats) > 0 {
			writeCounts(b, "column-sizes", f.stats.ColumnSizes, spec.Stats)
			writeCounts(b, "value-counts", f.stats.ValueCounts, spec.Stats)
			writeCounts(b, "null-value-counts", f.stats.NullValueCounts, spec.Stats)
			writeCounts(b, "nan-value-counts", f.stats.NaNValueCounts, spec.Stats)
			writeBounds(b, "lower-bounds", f.stats.LowerBounds, spec.Stats)
			writeBounds(b, "upper-bounds", f.stats.UpperBounds, spec.Stats)
		}
		if len(f.stats.SplitOffsets) > 0 {
			so, _ := json.Marshal(f.stats.SplitOffsets)
			b.WriteString(`,"split-offsets":`)
			b.Write(so)
		}
		b.WriteString("}}")
	}
	b.WriteString("]")
}

// writeCounts writes the spec's CountMap of m's entries for ids.
func writeCounts(b *bytes.Buffer, name string, m map[int]int64, ids []int) {
	var keys []int
	var vals []int64
	for _, id := range ids {
		if v, ok := m[id]; ok {
			keys, vals = append(keys, id), append(vals, v)
		}
	}
	if len(keys) == 0 {
		return
	}
	k, _ := json.Marshal(keys)
	v, _ := json.Marshal(vals)
	fmt.Fprintf(b, `,%q:{"keys":%s,"values":%s}`, name, k, v)
}

// writeBounds writes the spec's ValueMap (hex binary values) of m's entries
// for ids.
func writeBounds(b *bytes.Buffer, name string, m map[int][]byte, ids []int) {
	var keys []int
	var vals []string
	for _, id := range ids {
		if v, ok := m[id]; ok {
			keys, vals = append(keys, id), append(vals, hex.EncodeToString(v))
		}
	}
	if len(keys) == 0 {
		return
	}
	k, _ := json.Marshal(keys)
	v, _ := json.Marshal(vals)
	fmt.Fprintf(b, `,%q:{"keys":%s,"values":%s}`, name, k, v)
}

// span is an inclusive interval of int64 values.
type span struct {
	lo, hi int64
	empty  bool
}

var fullSpan = span{lo: math.MinInt64, hi: math.MaxInt64}

func (a span) and(b span) span {
	if a.empty || b.empty {
		return span{empty: true}
	}
	s := span{lo: max(a.lo, b.lo), hi: min(a.hi, b.hi)}
	s.empty = s.lo > s.hi
	return s
}

func (a span) or(b span) span {
	switch {
	case a.empty:
		return b
	case b.empty:
		return a
	}
	return span{lo: min(a.lo, b.lo), hi: max(a.hi, b.hi)}
}

// spans are the values of _kafka.offset and _kafka.partition a matching
// row can have: planFiles reads only the rows of files whose offset range
// and partition meet them, by their columns. They are never narrower than
// the filter, so the pruner's answer does not change; every file's offset
// bounds lie within its range.
type spans struct{ offset, partition span }

// bound returns the spans of a bound filter (NOT rewritten away).
func bound(e iceberg.BooleanExpression) spans {
	sp, err := iceberg.VisitExpr[spans](e, spanVisitor{})
	if err != nil {
		return spans{fullSpan, fullSpan} // unknown shapes bound nothing
	}
	return sp
}

// spanVisitor computes spans: AND meets, OR joins.
type spanVisitor struct{}

func (spanVisitor) VisitTrue() spans  { return spans{fullSpan, fullSpan} }
func (spanVisitor) VisitFalse() spans { return spans{span{empty: true}, span{empty: true}} }
func (spanVisitor) VisitNot(spans) spans {
	return spans{fullSpan, fullSpan} // rewritten away before; wide is right
}
func (spanVisitor) VisitAnd(l, r spans) spans {
	return spans{l.offset.and(r.offset), l.partition.and(r.partition)}
}
func (spanVisitor) VisitOr(l, r spans) spans {
	return spans{l.offset.or(r.offset), l.partition.or(r.partition)}
}
func (spanVisitor) VisitUnbound(iceberg.UnboundPredicate) spans { return spans{fullSpan, fullSpan} }
func (spanVisitor) VisitBound(e iceberg.BoundPredicate) spans {
	if ref, ok := e.Term().(iceberg.BoundReference); ok {
		switch ref.Field().ID {
		case codec.OffsetFieldID:
			return spans{predicateSpan(e), fullSpan}
		case codec.PartitionFieldID:
			return spans{fullSpan, predicateSpan(e)}
		}
	}
	return spans{fullSpan, fullSpan}
}

// predicateSpan is the interval of an integer column's values pred can
// match; the full span for what it does not bound.
func predicateSpan(pred iceberg.BoundPredicate) span {
	switch p := pred.(type) {
	case iceberg.BoundLiteralPredicate:
		v, ok := intOf(p.Literal())
		if !ok {
			return fullSpan
		}
		switch p.Op() {
		case iceberg.OpEQ:
			return span{lo: v, hi: v}
		case iceberg.OpLT:
			if v == math.MinInt64 {
				return span{empty: true}
			}
			return span{lo: math.MinInt64, hi: v - 1}
		case iceberg.OpLTEQ:
			return span{lo: math.MinInt64, hi: v}
		case iceberg.OpGT:
			if v == math.MaxInt64 {
				return span{empty: true}
			}
			return span{lo: v + 1, hi: math.MaxInt64}
		case iceberg.OpGTEQ:
			return span{lo: v, hi: math.MaxInt64}
		}
	case iceberg.BoundSetPredicate:
		if p.Op() != iceberg.OpIn {
			return fullSpan
		}
		s := span{empty: true}
		for _, l := range p.Literals().Members() {
			v, ok := intOf(l)
			if !ok {
				return fullSpan
			}
			s = s.or(span{lo: v, hi: v})
		}
		return s
	}
	return fullSpan
}

func intOf(l iceberg.Literal) (int64, bool) {
	switch v := l.(type) {
	case iceberg.Int32Literal:
		return int64(v), true
	case iceberg.Int64Literal:
		return int64(v), true
	}
	return 0, false
}

// constantsAsBooleans returns filter with each TrueExpression and
// FalseExpression in its object form ({"type":"true"}, Iceberg REST
// OpenAPI "Expression") written as the bare boolean, the only form
// iceberg-go's ParseExpr reads; it looks where an expression may stand
// (the root, and/or's left and right, not's child). Numbers are kept as
// written. Errors: filter is not JSON.
func constantsAsBooleans(filter json.RawMessage) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(filter))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	changed := false
	var walk func(v any) any
	walk = func(v any) any {
		m, ok := v.(map[string]any)
		if !ok {
			return v
		}
		switch m["type"] {
		case "true", "false":
			changed = true
			return m["type"] == "true"
		case "and", "or":
			m["left"], m["right"] = walk(m["left"]), walk(m["right"])
		case "not":
			m["child"] = walk(m["child"])
		}
		return m
	}
	v = walk(v)
	if !changed {
		return filter, nil
	}
	return json.Marshal(v)
}

// decodeBody decodes the request body (at most 1 MiB) as one JSON value
// into v. Anything but white space after the value is an error: a JSON
// text is one value (RFC 8259 §2), and `{}{}` is no request.
func decodeBody(r *http.Request, v any) error {
	dec := json.NewDecoder(io.LimitReader(r.Body, 1<<20))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("unexpected data after the JSON value")
	}
	return nil
}
