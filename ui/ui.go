// Package ui is the web console every node serves at /ui (docs/design.md
// §5, "Console"): the cluster (nodes, roles, lease counts, expiries) and
// each table (partitions with holder, epoch, offsets, lag and rate; data
// files, last commit, history and tags, schema versions, dead letters). It renders
// admin.Overview, the read model `mink status` prints, so the two show the
// same facts; any node shows the whole cluster (it reads Postgres, and
// Kafka for the high watermarks).
//
// Pages are server-rendered html/template (templates/), with their CSS and
// a few lines of JavaScript embedded (assets/): no build step, nothing
// fetched from elsewhere. An open page fetches its content again every
// Config.Refresh (the same URL with ?fragment=1, which answers the <main>
// element's content) and swaps it in place, so a person sees the cluster
// change without reloads or flashing.
//
// Routes, GET and HEAD only (405 otherwise): /ui (the cluster and a line
// per table), /ui/tables/{ns}.{name} (one table), /ui/assets/… (the CSS
// and JavaScript, open: nothing secret). Under auth principals a page
// needs an admin principal (Config.Auth).
package ui

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/minkhq/mink/admin"
	"github.com/minkhq/mink/auth"
	"github.com/minkhq/mink/outage"
	"github.com/minkhq/mink/pgstore"
	"github.com/minkhq/mink/tables"
)

// Source reads the overview the pages render: *admin.Handler.
type Source interface {
	// Overview returns the cluster and every table but dead-letter tables
	// (table ""), or the table named "<namespace>.<name>" alone
	// (admin.Handler.Overview).
	Overview(ctx context.Context, table string) (*admin.Overview, error)
}

var (
	//go:embed templates/*.html
	templateFiles embed.FS
	//go:embed assets
	assetFiles embed.FS
)

// Handler serves /ui.
type Handler struct {
	src    Source
	cfg    Config
	pages  *template.Template
	assets http.Handler

	mu    sync.Mutex
	reads map[string]*read // by table name, "" for /ui
}

// read is the last overview read for one page, shared by every viewer
// for up to Config.Refresh/2: the Postgres load of the console is bounded
// by the pages open, not by the viewers (each refreshes every
// Config.Refresh).
type read struct {
	mu sync.Mutex // held while reading: viewers who ask meanwhile wait for it
	at time.Time
	o  *admin.Overview
}

// maxReads bounds Handler.reads (table pages asked for by name).
const maxReads = 1000

// overview returns the overview of table ("" for all), read at most
// Config.Refresh/2 ago.
func (h *Handler) overview(ctx context.Context, table string) (*admin.Overview, error) {
	h.mu.Lock()
	rd, ok := h.reads[table]
	if !ok {
		if len(h.reads) >= maxReads {
			clear(h.reads)
		}
		rd = &read{}
		h.reads[table] = rd
	}
	h.mu.Unlock()
	rd.mu.Lock()
	defer rd.mu.Unlock()
	if rd.o != nil && time.Since(rd.at) < h.cfg.Refresh/2 {
		return rd.o, nil
	}
	o, err := h.src.Overview(ctx, table)
	if err != nil {
		return nil, err
	}
	rd.o, rd.at = o, time.Now()
	return o, nil
}

// New returns the console's handler. It panics on a cfg that Validate
// rejects (`mink serve` validates its settings before it starts anything).
func New(src Source, cfg Config) *Handler {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	sub, err := fs.Sub(assetFiles, "assets")
	if err != nil {
		panic(err)
	}
	return &Handler{src: src, cfg: cfg, reads: map[string]*read{},
		pages:  template.Must(template.New("").Funcs(funcs).ParseFS(templateFiles, "templates/*.html")),
		assets: http.StripPrefix("/ui/assets/", http.FileServerFS(sub))}
}

// securityHeaders are set on every answer: the pages load only their own
// assets (no inline script or style), are never framed, and are not
// cached (they hold the cluster's state, for admins).
var securityHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
		"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
	"X-Content-Type-Options": "nosniff",
	"X-Frame-Options":        "DENY",
	"Referrer-Policy":        "no-referrer",
	"Cache-Control":          "no-store",
}

// ServeHTTP answers a request below /ui.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	for k, v := range securityHeaders {
		w.Header().Set(k, v)
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		h.message(w, r, http.StatusMethodNotAllowed, "The console is read-only: GET and HEAD only, not "+r.Method+".")
		return
	}
	path := r.URL.Path
	if strings.HasPrefix(path, "/ui/assets/") {
		if strings.HasSuffix(path, "/") { // files only, no listing
			h.message(w, r, http.StatusNotFound, "No such page: "+path+". The console is at /ui.")
			return
		}
		h.assets.ServeHTTP(w, r)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 20*time.Second)
	defer cancel()
	r = r.WithContext(ctx)
	var table string
	switch {
	case path == "/ui" || path == "/ui/":
	case strings.HasPrefix(path, "/ui/tables/") && len(path) > len("/ui/tables/"):
		table = strings.TrimPrefix(path, "/ui/tables/")
	default:
		h.message(w, r, http.StatusNotFound, "No such page: "+path+". The console is at /ui.")
		return
	}
	if !h.authorize(w, r) {
		return
	}
	o, err := h.overview(ctx, table)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	p := &page{Overview: o, NodeID: h.cfg.NodeID, RefreshMS: h.cfg.Refresh.Milliseconds(), Title: "Cluster"}
	if table != "" {
		if len(o.Tables) != 1 {
			h.message(w, r, http.StatusNotFound, "No table "+table+".")
			return
		}
		p.Table, p.Title = o.Tables[0], o.Tables[0].Table
	}
	h.render(w, r, http.StatusOK, p)
}

// page is what a template renders.
type page struct {
	Title     string
	NodeID    string
	RefreshMS int64
	*admin.Overview
	// Table is the table of a table page, nil on /ui.
	Table *admin.TableStatus
	// Message is the text of an error page.
	Message string
	Code    int
}

// render writes p: the whole page, or with ?fragment=1 only the content
// of its <main> (what the page's script swaps in).
func (h *Handler) render(w http.ResponseWriter, r *http.Request, code int, p *page) {
	name := "page"
	if r.URL.Query().Get("fragment") == "1" {
		name = "content"
	}
	var b bytes.Buffer
	if err := h.pages.ExecuteTemplate(&b, name, p); err != nil {
		h.cfg.Logger.Error("ui: render", "path", r.URL.Path, "err", err)
		http.Error(w, "the console could not render this page", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	if r.Method != http.MethodHead {
		_, _ = w.Write(b.Bytes())
	}
}

// message answers an error page with code.
func (h *Handler) message(w http.ResponseWriter, r *http.Request, code int, msg string) {
	if code == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "2")
	}
	h.render(w, r, code, &page{Title: http.StatusText(code), NodeID: h.cfg.NodeID,
		RefreshMS: h.cfg.Refresh.Milliseconds(), Message: msg, Code: code})
}

// fail answers an error of the overview: 400 for a name no table can
// have or a dead-letter table's, 404 for a missing table, 503 when
// Postgres or Kafka cannot be reached, else 500.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	err = pgstore.Unavailable(err)
	switch {
	case errors.Is(err, tables.ErrBadName), errors.Is(err, tables.ErrInvalid):
		h.message(w, r, http.StatusBadRequest, err.Error())
	case errors.Is(err, tables.ErrNotFound):
		h.message(w, r, http.StatusNotFound, "No such table: "+strings.TrimPrefix(r.URL.Path, "/ui/tables/")+".")
	case errors.Is(err, outage.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
		h.message(w, r, http.StatusServiceUnavailable, "This node cannot read the cluster now: "+err.Error())
	default:
		h.cfg.Logger.Warn("ui: read the overview", "path", r.URL.Path, "err", err)
		h.message(w, r, http.StatusInternalServerError, "This node could not read the cluster: "+err.Error())
	}
}

// authorize lets a request through when Config.Auth is nil or it carries
// an admin principal's credentials: HTTP Basic (client id and secret, what
// a browser sends after the Basic challenge) or a bearer token. Else it
// answers 401 with the Basic challenge (so that a browser prompts), 403
// for a principal that is not an admin, or 503, and returns false.
func (h *Handler) authorize(w http.ResponseWriter, r *http.Request) bool {
	if h.cfg.Auth == nil {
		return true
	}
	var p *auth.Principal
	var err error
	if id, secret, ok := r.BasicAuth(); ok {
		p, err = h.cfg.Auth.Store().Authenticate(r.Context(), id, secret)
		if errors.Is(err, auth.ErrInvalidClient) {
			err = fmt.Errorf("%w: unknown client id, wrong secret, or a revoked principal", auth.ErrTokenInvalid)
		}
	} else {
		p, err = h.cfg.Auth.Bearer(r.Context(), r)
	}
	switch {
	case auth.Unauthenticated(err):
		w.Header().Set("WWW-Authenticate", `Basic realm="mink", charset="UTF-8"`)
		h.message(w, r, http.StatusUnauthorized, "Sign in with an admin principal's client id and secret "+
			"(mink principal create NAME --admin prints them; mink dev prints dev-admin's). "+
			strings.TrimPrefix(err.Error(), "auth: ")+".")
		return false
	case err != nil:
		h.cfg.Logger.Warn("ui: authenticate", "err", err)
		h.message(w, r, http.StatusServiceUnavailable, "This node cannot check credentials now (Postgres).")
		return false
	case !p.Admin:
		h.message(w, r, http.StatusForbidden, "Principal "+p.Name+" is not an admin; the console needs an admin principal.")
		return false
	}
	return true
}
