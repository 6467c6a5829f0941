package catalog

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// Page sizes of the listings, when a client pages (sends pageToken).
const (
	// DefaultPageSize is the page size when the client gives none.
	DefaultPageSize = 100
	// MaxPageSize caps a client's pageSize; the spec makes pageSize an
	// upper bound, so a smaller page is still an answer.
	MaxPageSize = 1000
)

var (
	levelName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	tableName = regexp.MustCompile(`^[A-Za-z0-9_-]+(~dlq)?$`)
)

// parseNamespace splits a namespace as a path segment or ?parent= carries
// it (after URL decoding): levels joined by the unit separator 0x1F, the
// spec's default. "." separates levels too, since no Mink name contains
// one. ok is false when the result cannot name a Mink namespace.
func parseNamespace(s string) (ns []string, ok bool) {
	ns = strings.FieldsFunc(s, func(r rune) bool { return r == 0x1f || r == '.' })
	if len(ns) == 0 || len(ns) != strings.Count(s, "\x1f")+strings.Count(s, ".")+1 {
		return nil, false // empty, or an empty level
	}
	for _, l := range ns {
		if !levelName.MatchString(l) {
			return nil, false
		}
	}
	return ns, true
}

// badNamespace is the error of a namespace parseNamespace refused: 400
// when a level is empty (the spec's separator misused: "a\x1f", "a..b";
// no catalog can hold such a namespace, so the request is malformed),
// else 404, as for a name no Mink namespace can have.
func badNamespace(raw string) error {
	levels := strings.FieldsFunc(raw, func(r rune) bool { return r == 0x1f || r == '.' })
	if len(levels) != strings.Count(raw, "\x1f")+strings.Count(raw, ".")+1 {
		return badRequest("Malformed namespace %q: empty namespace level", raw)
	}
	return noSuchNamespace([]string{raw})
}

// page is a listing request's paging.
type page struct {
	// on is whether the client pages (sent pageToken, even empty). The spec
	// has a server answer everything at once to a request without one.
	on bool
	// after is the last name of the previous page; size the page's length.
	after string
	size  int
}

// limit is the number of rows to ask for: one more than the page, to learn
// whether another page follows; 0 for all.
func (p page) limit() int {
	if !p.on {
		return 0
	}
	return p.size + 1
}

// cut trims names (queried with p.limit()) to the page and returns the
// token of the next page, nil when this one is the last.
func (p page) cut(names []string) ([]string, *string) {
	if !p.on || len(names) <= p.size {
		return names, nil
	}
	names = names[:p.size]
	tok := base64.RawURLEncoding.EncodeToString([]byte(names[len(names)-1]))
	return names, &tok
}

func parsePage(q url.Values) (page, error) {
	p := page{size: DefaultPageSize}
	if q.Has("pageSize") {
		n, err := strconv.Atoi(q.Get("pageSize"))
		if err != nil || n < 1 {
			return p, badRequest("Invalid pageSize %q: want an integer of at least 1", q.Get("pageSize"))
		}
		p.size = min(n, MaxPageSize)
	}
	if q.Has("pageToken") {
		p.on = true
		if tok := q.Get("pageToken"); tok != "" {
			b, err := base64.RawURLEncoding.DecodeString(tok)
			if err != nil || !tableName.Match(b) {
				return p, badRequest("Invalid pageToken %q: pass the next-page-token of the previous page", tok)
			}
			p.after = string(b)
		}
	}
	return p, nil
}

// listPage answers the paging of a listing below namespace ns (nil: the
// top level): it lists with list the names after the request's page token,
// at most its page size, and returns them with the next page's token. An
// empty page below a namespace asks whether ns exists at all (it may hold
// only tables, or only namespaces). On a failure it answers the request
// and returns false.
func (h *Handler) listPage(w http.ResponseWriter, r *http.Request, ns []string, l lister,
	list func(ctx context.Context, ns []string, after string, limit int) ([]string, error)) (names []string, next *string, ok bool) {
	p, err := parsePage(r.URL.Query())
	if err != nil {
		h.writeError(w, r, err)
		return nil, nil, false
	}
	names, err = list(r.Context(), ns, p.after, p.limit())
	if err == nil && len(names) == 0 && ns != nil {
		err = l.requireNamespace(r.Context(), ns)
	}
	if err != nil {
		h.writeError(w, r, err, logAttrs(ns, "")...)
		return nil, nil, false
	}
	names, next = p.cut(names)
	return names, next, true
}

type listNamespacesResponse struct {
	Namespaces    [][]string `json:"namespaces"`
	NextPageToken *string    `json:"next-page-token,omitempty"`
}

// listNamespaces answers GET /v1/namespaces[?parent=a%1Fb]: the namespaces
// one level below parent, or the top-level ones.
func (h *Handler) listNamespaces(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var parent []string
	if s := q.Get("parent"); s != "" {
		var ok bool
		if parent, ok = parseNamespace(s); !ok {
			h.writeError(w, r, badNamespace(s))
			return
		}
	}
	l := h.lister(r)
	children, next, ok := h.listPage(w, r, parent, l, l.listNamespaces)
	if !ok {
		return
	}
	resp := listNamespacesResponse{Namespaces: make([][]string, len(children)), NextPageToken: next}
	for i, c := range children {
		resp.Namespaces[i] = append(append(make([]string, 0, len(parent)+1), parent...), c)
	}
	writeJSON(w, http.StatusOK, resp)
}

type getNamespaceResponse struct {
	Namespace  []string          `json:"namespace"`
	Properties map[string]string `json:"properties"`
}

// loadNamespace answers GET /v1/namespaces/{namespace}. Mink namespaces
// have no properties of their own; "location" says where their tables live.
func (h *Handler) loadNamespace(w http.ResponseWriter, r *http.Request) {
	ns, ok := h.namespace(w, r)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, getNamespaceResponse{
		Namespace:  ns,
		Properties: map[string]string{"location": h.store.prefix + strings.Join(ns, "/")},
	})
}

// namespaceExists answers HEAD /v1/namespaces/{namespace}: 204 or 404.
func (h *Handler) namespaceExists(w http.ResponseWriter, r *http.Request) {
	if _, ok := h.namespace(w, r); ok {
		w.WriteHeader(http.StatusNoContent)
	}
}

// namespace returns the request's {namespace} when it exists, else answers
// the request (404, or 503 …) and returns false.
func (h *Handler) namespace(w http.ResponseWriter, r *http.Request) ([]string, bool) {
	raw := r.PathValue("namespace")
	ns, ok := parseNamespace(raw)
	if !ok {
		h.writeError(w, r, badNamespace(raw))
		return nil, false
	}
	if err := h.lister(r).requireNamespace(r.Context(), ns); err != nil {
		h.writeError(w, r, err, logAttrs(ns, "")...)
		return nil, false
	}
	return ns, true
}

type tableIdentifier struct {
	Namespace []string `json:"namespace"`
	Name      string   `json:"name"`
}

type listTablesResponse struct {
	Identifiers   []tableIdentifier `json:"identifiers"`
	NextPageToken *string           `json:"next-page-token,omitempty"`
}

// listTables answers GET /v1/namespaces/{namespace}/tables, dead-letter
// tables included.
func (h *Handler) listTables(w http.ResponseWriter, r *http.Request) {
	raw := r.PathValue("namespace")
	ns, ok := parseNamespace(raw)
	if !ok {
		h.writeError(w, r, badNamespace(raw))
		return
	}
	l := h.lister(r)
	names, next, ok := h.listPage(w, r, ns, l, l.listTables)
	if !ok {
		return
	}
	resp := listTablesResponse{Identifiers: make([]tableIdentifier, len(names)), NextPageToken: next}
	for i, n := range names {
		resp.Identifiers[i] = tableIdentifier{Namespace: ns, Name: n}
	}
	writeJSON(w, http.StatusOK, resp)
}

// listViews answers GET /v1/namespaces/{namespace}/views: Mink has no
// views, so an existing namespace lists none.
func (h *Handler) listViews(w http.ResponseWriter, r *http.Request) {
	if _, err := parsePage(r.URL.Query()); err != nil {
		h.writeError(w, r, err)
		return
	}
	if _, ok := h.namespace(w, r); ok {
		writeJSON(w, http.StatusOK, listTablesResponse{Identifiers: []tableIdentifier{}})
	}
}

// loadView answers GET and HEAD /v1/namespaces/{namespace}/views/{view}:
// there are no views.
func (h *Handler) loadView(w http.ResponseWriter, r *http.Request) {
	writeErrorModel(w, r, &apiError{http.StatusNotFound, typeNoSuchView,
		"View does not exist: " + strings.ReplaceAll(r.PathValue("namespace"), "\x1f", ".") + "." + r.PathValue("view") +
			" (Mink serves tables only)"})
}
