package catalog

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// table returns the request's {namespace} and {table}, or answers 404 for
// names no Mink table can have and returns false.
func (h *Handler) table(w http.ResponseWriter, r *http.Request) ([]string, string, bool) {
	rawNS, name := r.PathValue("namespace"), r.PathValue("table")
	ns, ok := parseNamespace(rawNS)
	if !ok {
		ns = []string{rawNS}
	}
	if !ok || !tableName.MatchString(name) {
		h.writeError(w, r, noSuchTable(ns, name))
		return nil, "", false
	}
	return ns, name, true
}

// tableExists answers HEAD /v1/namespaces/{namespace}/tables/{table}.
func (h *Handler) tableExists(w http.ResponseWriter, r *http.Request) {
	ns, name, ok := h.table(w, r)
	if !ok {
		return
	}
	exists, err := h.store.tableExists(r.Context(), ns, name)
	if err == nil && !exists {
		err = noSuchTable(ns, name)
	}
	if err != nil {
		h.writeError(w, r, err, logAttrs(ns, name)...)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// loadTable answers GET /v1/namespaces/{namespace}/tables/{table} with the
// spec's LoadTableResult: the metadata location, the metadata JSON as
// stored (verbatim, so it matches the file the S3 API serves byte for
// byte), and the config that points the engine's S3 client at Mink.
//
// ?snapshots=refs is accepted and answered like all: Mink's tables keep
// only the snapshots of their retention, all on the main branch's history.
func (h *Handler) loadTable(w http.ResponseWriter, r *http.Request) {
	ns, name, ok := h.table(w, r)
	if !ok {
		return
	}
	switch s := r.URL.Query().Get("snapshots"); s {
	case "", "all", "refs":
	default:
		h.writeError(w, r, badRequest("Invalid snapshots %q: want all or refs", s))
		return
	}

	committed, err := h.store.loadTable(r.Context(), ns, name)
	if errors.Is(err, errNoTable) {
		err = noSuchTable(ns, name)
	}
	if err != nil {
		h.writeError(w, r, err, logAttrs(ns, name)...)
		return
	}
	t, err := h.cfg.Loader.LoadTable(r.Context(), committed)
	if err != nil {
		h.writeError(w, r, fmt.Errorf("load table: %w", err), logAttrs(ns, name)...)
		return
	}

	etag := h.etag(t.MetadataLocation)
	w.Header().Set("ETag", etag)
	if etagMatches(r.Header.Values("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if !json.Valid(t.Metadata) {
		h.writeError(w, r, fmt.Errorf("metadata %s is not valid JSON", t.MetadataLocation), logAttrs(ns, name)...)
		return
	}
	loc, err := json.Marshal(t.MetadataLocation)
	if err != nil {
		h.writeError(w, r, err, logAttrs(ns, name)...)
		return
	}
	// Assembled by hand so that the metadata goes out as stored;
	// encoding/json would re-encode it.
	var b bytes.Buffer
	b.Grow(len(t.Metadata) + len(loc) + len(h.tableConfig) + 64)
	b.WriteString(`{"metadata-location":`)
	b.Write(loc)
	b.WriteString(`,"metadata":`)
	b.Write(t.Metadata)
	b.WriteString(`,"config":`)
	b.Write(h.tableConfig)
	b.WriteString("}")
	writeRawJSON(w, http.StatusOK, b.Bytes())
}

// etag is a table load's entity tag: a hash of the metadata location (a new
// commit or tail snapshot has a new one) and of this node's table config.
func (h *Handler) etag(metadataLocation string) string {
	s := sha256.New()
	s.Write(h.etagSalt[:])
	s.Write([]byte(metadataLocation))
	return `"` + hex.EncodeToString(s.Sum(nil)[:16]) + `"`
}

// etagMatches applies If-None-Match (RFC 9110 §13.1.2, weak comparison):
// any listed tag, or "*", matches.
func etagMatches(headers []string, etag string) bool {
	for _, h := range headers {
		for _, tag := range strings.Split(h, ",") {
			tag = strings.TrimSpace(tag)
			if tag == "*" || strings.TrimPrefix(tag, "W/") == etag {
				return true
			}
		}
	}
	return false
}
