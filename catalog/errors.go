package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/minkhq/mink/outage"
)

// Error types of the spec's ErrorModel that Mink answers. Java clients pick
// the exception they throw from the type (NoSuchNamespaceException vs
// NoSuchTableException on a 404), so these are the spec's names.
const (
	typeBadRequest         = "BadRequestException"
	typeForbidden          = "ForbiddenException"
	typeNoSuchNamespace    = "NoSuchNamespaceException"
	typeNoSuchTable        = "NoSuchTableException"
	typeNoSuchView         = "NoSuchViewException"
	typeNotFound           = "NotFoundException"
	typeServiceUnavailable = "ServiceUnavailableException"
	typeInternal           = "InternalServerError"
)

// errorModel is the spec's ErrorModel inside its IcebergErrorResponse.
type errorModel struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Code    int    `json:"code"`
}

type errorResponse struct {
	Error errorModel `json:"error"`
}

// apiError is a request failure that answers with its own status and type.
type apiError struct {
	status int
	typ    string
	msg    string
}

func (e *apiError) Error() string { return e.msg }

func badRequest(format string, args ...any) error {
	return &apiError{http.StatusBadRequest, typeBadRequest, fmt.Sprintf(format, args...)}
}

// isBadRequest reports whether err answers 400.
func isBadRequest(err error) bool {
	var ae *apiError
	return errors.As(err, &ae) && ae.status == http.StatusBadRequest
}

func noSuchNamespace(ns []string) error {
	return &apiError{http.StatusNotFound, typeNoSuchNamespace,
		fmt.Sprintf("Namespace does not exist: %s", joinLevels(ns))}
}

func noSuchTable(ns []string, name string) error {
	return &apiError{http.StatusNotFound, typeNoSuchTable,
		fmt.Sprintf("Table does not exist: %s.%s", joinLevels(ns), name)}
}

// writeError answers err as an ErrorModel: an apiError as it says, an
// outage (outage.ErrUnavailable: Postgres, or Kafka for a Loader) as 503
// with Retry-After, anything else as 500. Server-side failures are logged
// with attrs (namespace, table).
func (h *Handler) writeError(w http.ResponseWriter, r *http.Request, err error, attrs ...any) {
	if r.Context().Err() != nil {
		// The engine went away; nobody reads the answer.
		h.log.DebugContext(r.Context(), "catalog: request abandoned by client",
			append(attrs, "method", r.Method, "path", r.URL.Path, "err", err)...)
		return
	}
	var ae *apiError
	switch {
	case errors.As(err, &ae):
	case errors.Is(err, outage.ErrUnavailable):
		// The cause goes with it: "unreachable" and, say, a batch Kafka
		// serves corrupt need different hands.
		ae = &apiError{http.StatusServiceUnavailable, typeServiceUnavailable,
			"Mink cannot answer this right now (Postgres or Kafka): " + err.Error() + "; retry later"}
		w.Header().Set("Retry-After", strconv.Itoa(int((h.cfg.RetryAfter+time.Second-1)/time.Second)))
		h.log.WarnContext(r.Context(), "catalog: unavailable",
			append(attrs, "method", r.Method, "path", r.URL.Path, "err", err)...)
	default:
		ae = &apiError{http.StatusInternalServerError, typeInternal, "internal error; see the Mink node's log"}
		h.log.ErrorContext(r.Context(), "catalog: request failed",
			append(attrs, "method", r.Method, "path", r.URL.Path, "err", err)...)
	}
	writeErrorModel(w, r, ae)
}

func writeErrorModel(w http.ResponseWriter, r *http.Request, ae *apiError) {
	if r.Method == http.MethodHead {
		// HEAD answers carry no body; clients decode by status alone.
		w.WriteHeader(ae.status)
		return
	}
	writeJSON(w, ae.status, errorResponse{Error: errorModel{Message: ae.msg, Type: ae.typ, Code: ae.status}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		// Only our own response types reach here; they always marshal.
		panic(fmt.Sprintf("catalog: marshal response: %v", err))
	}
	writeRawJSON(w, status, body)
}

func writeRawJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// logAttrs returns the slog attributes naming a request's namespace and
// table, for log lines.
func logAttrs(ns []string, table string) []any {
	attrs := make([]any, 0, 4)
	if ns != nil {
		attrs = append(attrs, slog.String("namespace", joinLevels(ns)))
	}
	if table != "" {
		attrs = append(attrs, slog.String("table", table))
	}
	return attrs
}
