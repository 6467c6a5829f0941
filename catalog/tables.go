package catalog

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strings"

	"github.com/minkhq/mink/tables"
)

// table returns the request's {namespace} and {table}, or answers 404 for
// names no Mink table can have (400 for a namespace with an empty level,
// badNamespace) and returns false.
func (h *Handler) table(w http.ResponseWriter, r *http.Request) ([]string, string, bool) {
	rawNS, name := r.PathValue("namespace"), r.PathValue("table")
	ns, ok := parseNamespace(rawNS)
	if !ok {
		if err := badNamespace(rawNS); isBadRequest(err) {
			h.writeError(w, r, err)
			return nil, "", false
		}
		ns = []string{rawNS}
	}
	if !ok || !tableName.MatchString(name) {
		h.writeError(w, r, noSuchTable(ns, name))
		return nil, "", false
	}
	return ns, name, true
}

// visibleTable is table's namespace and name when the table exists and
// the caller's grants allow it; otherwise it answers the error (404 as for
// a missing table, or the store's) and returns false.
func (h *Handler) visibleTable(w http.ResponseWriter, r *http.Request) (ns []string, name string, ok bool) {
	ns, name, ok = h.table(w, r)
	if !ok {
		return nil, "", false
	}
	exists, err := h.store.tableExists(r.Context(), ns, name)
	if err == nil && (!exists || !allowed(r, ns, name)) {
		err = noSuchTable(ns, name)
	}
	if err != nil {
		h.writeError(w, r, err, logAttrs(ns, name)...)
		return nil, "", false
	}
	return ns, name, true
}

// tableExists answers HEAD /v1/namespaces/{namespace}/tables/{table}.
func (h *Handler) tableExists(w http.ResponseWriter, r *http.Request) {
	if _, _, ok := h.visibleTable(w, r); ok {
		w.WriteHeader(http.StatusNoContent)
	}
}

// loadNow returns committed as a load answers it now (Loader, zero lag),
// or writes the error and returns false: 404 NoSuchTableException when
// the table was deleted meanwhile (tables.ErrNotFound), 503 in an outage.
func (h *Handler) loadNow(w http.ResponseWriter, r *http.Request, ns []string, name string, committed Table) (Table, bool) {
	t, err := h.cfg.Loader.LoadTable(r.Context(), committed)
	if errors.Is(err, tables.ErrNotFound) {
		err = noSuchTable(ns, name)
	} else if err != nil {
		err = fmt.Errorf("load table: %w", err)
	}
	if err != nil {
		h.writeError(w, r, err, logAttrs(ns, name)...)
		return Table{}, false
	}
	return t, true
}

// loadCommitted returns the table ns.name as committed (store.loadTable),
// or writes the error and returns false: 404 NoSuchTableException when
// there is none.
func (h *Handler) loadCommitted(w http.ResponseWriter, r *http.Request, ns []string, name string) (Table, bool) {
	t, err := h.store.loadTable(r.Context(), ns, name)
	if errors.Is(err, errNoTable) {
		err = noSuchTable(ns, name)
	}
	if err != nil {
		h.writeError(w, r, err, logAttrs(ns, name)...)
		return Table{}, false
	}
	return t, true
}

// loadTable answers GET /v1/namespaces/{namespace}/tables/{table} with the
// spec's LoadTableResult: the metadata location, the metadata JSON as
// stored (verbatim, so it matches the file the S3 API serves byte for
// byte; but for properties that configure a reader's IO, stored before
// Mink refused them, which are left out: servedMetadata), and the config that points the engine's S3 client at Mink.
//
// ?snapshots=refs is accepted and answered like all, as the spec allows
// (refs asks for at least the snapshots the refs name): the answer is the
// stored metadata file, which holds main's retained history and each
// tag's snapshot (docs/design.md §4.8), so it stays the file the S3 API
// serves. Mink's retention already keeps that list short.
func (h *Handler) loadTable(w http.ResponseWriter, r *http.Request) {
	ns, name, ok := h.table(w, r)
	if !ok {
		return
	}
	if !allowed(r, ns, name) {
		// Exactly the answer of a table that does not exist.
		h.writeError(w, r, noSuchTable(ns, name))
		return
	}
	switch s := r.URL.Query().Get("snapshots"); s {
	case "", "all", "refs":
	default:
		h.writeError(w, r, badRequest("Invalid snapshots %q: want all or refs", s))
		return
	}

	committed, ok := h.loadCommitted(w, r, ns, name)
	if !ok {
		return
	}
	t, ok := h.loadNow(w, r, ns, name, committed)
	if !ok {
		return
	}

	creds, prefixes, err := h.vended(r, committed)
	if err != nil {
		h.writeError(w, r, fmt.Errorf("vend credentials: %w", err), logAttrs(ns, name)...)
		return
	}
	// The credentials are part of the answer: a 304 must not keep a client
	// on credentials other than these.
	etag := h.etag(t.MetadataLocation, creds["s3.access-key-id"], creds["s3.session-token"])
	w.Header().Set("ETag", etag)
	if etagMatches(r.Header.Values("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if !json.Valid(t.Metadata) {
		h.writeError(w, r, fmt.Errorf("metadata %s is not valid JSON", t.MetadataLocation), logAttrs(ns, name)...)
		return
	}
	metadata := h.dropped.servedMetadata(h.log, t.MetadataLocation, t.Metadata)
	loc, err := json.Marshal(t.MetadataLocation)
	if err != nil {
		h.writeError(w, r, err, logAttrs(ns, name)...)
		return
	}
	config := h.tableConfig
	if creds != nil {
		config = maps.Clone(config)
		maps.Copy(config, creds)
	}
	cfgJSON, err := json.Marshal(config)
	if err != nil {
		h.writeError(w, r, err, logAttrs(ns, name)...)
		return
	}
	// Assembled by hand so that the metadata goes out as stored;
	// encoding/json would re-encode it.
	var b bytes.Buffer
	b.Grow(len(metadata) + len(loc) + len(cfgJSON) + 64)
	b.WriteString(`{"metadata-location":`)
	b.Write(loc)
	b.WriteString(`,"metadata":`)
	b.Write(metadata)
	b.WriteString(`,"config":`)
	b.Write(cfgJSON)
	if creds != nil {
		sc, err := json.Marshal(h.storageCredentials(creds, prefixes))
		if err != nil {
			h.writeError(w, r, err, logAttrs(ns, name)...)
			return
		}
		b.WriteString(`,"storage-credentials":`)
		b.Write(sc)
	}
	b.WriteString("}")
	writeRawJSON(w, http.StatusOK, b.Bytes())
}

// etag is a table load's entity tag: a hash of the metadata location (a new
// commit or tail snapshot has a new one), of this node's table config and
// of the vended credentials (vary: their access key id and session token).
func (h *Handler) etag(metadataLocation string, vary ...string) string {
	s := sha256.New()
	s.Write(h.etagSalt[:])
	s.Write([]byte(metadataLocation))
	for _, v := range vary {
		if v == "" {
			continue // auth none: nothing vended
		}
		s.Write([]byte{0})
		s.Write([]byte(v))
	}
	return `"` + hex.EncodeToString(s.Sum(nil)[:16]) + `"`
}

// etagMatches evaluates If-None-Match (RFC 9110 §13.1.2) against etag, a
// strong tag: it reports whether the field is "*" or lists a tag equal to
// etag by the weak comparison (§8.8.3.2: W/ is disregarded). The field
// lines are one list (§5.3). Its grammar is "*" / #entity-tag, with
// entity-tag = [ "W/" ] DQUOTE *etagc DQUOTE, so a comma inside quotes
// belongs to the tag; a field that does not parse (or lists "*" among
// tags) is ignored, as a field with an invalid value may be (§5.5), and
// the table is sent.
func etagMatches(lines []string, etag string) bool {
	if len(lines) == 0 {
		return false
	}
	field := strings.Trim(strings.Join(lines, ","), " \t")
	if field == "*" {
		return true
	}
	matched := false
	for rest := field; ; {
		// Empty list elements and the OWS around commas (§5.6.1.2).
		rest = strings.TrimLeft(rest, " \t,")
		if rest == "" {
			return matched
		}
		tag, after, ok := cutEntityTag(rest)
		if !ok {
			return false
		}
		if strings.TrimPrefix(tag, "W/") == etag {
			matched = true
		}
		after = strings.TrimLeft(after, " \t")
		if after != "" && after[0] != ',' {
			return false
		}
		rest = after
	}
}

// cutEntityTag cuts one entity-tag (RFC 9110 §8.8.3) off the front of s.
func cutEntityTag(s string) (tag, rest string, ok bool) {
	start := 0
	if strings.HasPrefix(s, "W/") {
		start = 2
	}
	if len(s) <= start || s[start] != '"' {
		return "", "", false
	}
	for i := start + 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			return s[:i+1], s[i+1:], true
		case c == 0x21 || c >= 0x23 && c <= 0x7e || c >= 0x80: // etagc
		default:
			return "", "", false
		}
	}
	return "", "", false
}
