package admin

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"

	"github.com/minkhq/mink/writer"
)

// alterTable answers POST /admin/v1/tables/{ns.name}/schema: the body is
// an Iceberg schema (as for a create) that the table's columns evolve to
// take (schemas.Store.Alter, docs/design.md §4.7). 200 with AlterResult;
// 400 for a change Iceberg does not allow (the evolution error's text), a
// table that is not json, or a bad schema.
func (h *Handler) alterTable(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("schema larger than %d bytes", maxBody))
			return
		}
		writeError(w, http.StatusBadRequest, "invalid schema: "+err.Error())
		return
	}
	declared := new(iceberg.Schema)
	if err := json.Unmarshal(b, declared); err != nil {
		writeError(w, http.StatusBadRequest, "invalid schema: "+err.Error()+` (expected an Iceberg schema: {"type":"struct","fields":[…]})`)
		return
	}
	t, ok := h.lookup(w, r)
	if !ok {
		return
	}
	next, changed, err := h.cfg.Schemas.Alter(r.Context(), t, declared)
	if err != nil {
		h.fail(w, err)
		return
	}
	if changed {
		h.cfg.Logger.Info("admin: table schema altered", "table", t.FullName(), "schema_id", next.ID)
	}
	writeJSON(w, http.StatusOK, AlterResult{Table: t.FullName(), Changed: changed, SchemaID: next.ID, Schema: next})
}

// repairTable answers POST /admin/v1/tables/{ns.name}/repair?limit=N&after=P:O:
// one batch of writer.Repair (at most N ranges, after range O of partition
// P). 200 with writer.RepairResult.
func (h *Handler) repairTable(w http.ResponseWriter, r *http.Request) {
	var opts writer.RepairOptions
	q := r.URL.Query()
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 || n > writer.MaxRepairLimit {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("limit must be between 1 and %d, not %q", writer.MaxRepairLimit, v))
			return
		}
		opts.Limit = n
	}
	if v := q.Get("after"); v != "" {
		pos, err := ParsePosition(v)
		if err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		opts.After = &pos
	}
	t, ok := h.lookup(w, r)
	if !ok {
		return
	}
	res, err := writer.Repair(r.Context(), h.pool, h.kafka, h.cfg.Schemas, t, opts, h.cfg.Logger)
	if err != nil {
		h.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// FormatPosition is the after parameter of a repair: "<partition>:<offset>".
func FormatPosition(p writer.Position) string { return fmt.Sprintf("%d:%d", p.Partition, p.Offset) }

// ParsePosition parses FormatPosition's form.
func ParsePosition(s string) (writer.Position, error) {
	ps, offs, ok := strings.Cut(s, ":")
	p, err1 := strconv.ParseInt(ps, 10, 32)
	o, err2 := strconv.ParseInt(offs, 10, 64)
	if !ok || err1 != nil || err2 != nil || p < 0 || o < 0 {
		return writer.Position{}, fmt.Errorf("after must be PARTITION:OFFSET, not %q", s)
	}
	return writer.Position{Partition: int32(p), Offset: o}, nil
}
