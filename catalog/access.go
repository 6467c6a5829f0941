package catalog

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/minkhq/mink/auth"
	"github.com/minkhq/mink/outage"
	"github.com/minkhq/mink/tables"
)

// typeNotAuthorized is the ErrorModel type of a 401 (the spec's
// UnauthorizedResponse; Java clients throw NotAuthorizedException).
const typeNotAuthorized = "NotAuthorizedException"

// tokensPath is the spec's getToken, served without a bearer token.
const tokensPath = "/v1/oauth/tokens"

// credentialsPath is the spec's loadCredentials.
const credentialsPath = "/v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials"

// authenticate returns r with its principal in the context when
// Config.Auth is set; without one (auth none) r as it is. A request
// without a valid bearer token is answered 401 with the spec's ErrorModel
// and a WWW-Authenticate challenge (RFC 6750 §3), and ok is false.
func (h *Handler) authenticate(w http.ResponseWriter, r *http.Request) (_ *http.Request, ok bool) {
	if h.cfg.Auth == nil || r.URL.Path == tokensPath {
		return r, true
	}
	ctx, cancel := context.WithTimeout(r.Context(), h.cfg.QueryTimeout)
	p, err := h.cfg.Auth.Bearer(ctx, r)
	cancel()
	switch {
	case auth.Unauthenticated(err):
		w.Header().Set("WWW-Authenticate", auth.Challenge(err))
		writeErrorModel(w, r, &apiError{http.StatusUnauthorized, typeNotAuthorized,
			"Not authorized: " + strings.TrimPrefix(err.Error(), "auth: ") +
				"; get a token from POST /v1/oauth/tokens with a principal's credential (mink principal create)"})
		return nil, false
	case err != nil:
		if r.Context().Err() == nil {
			err = fmt.Errorf("catalog: %w: authenticate: %w", outage.ErrUnavailable, err)
		}
		h.writeError(w, r, err)
		return nil, false
	}
	return r.WithContext(auth.WithPrincipal(r.Context(), p)), true
}

// restricted returns the request's principal when it sees only the
// tables of its grants; nil when it sees every table (an admin, or auth
// none).
func restricted(ctx context.Context) *auth.Principal {
	if p := auth.PrincipalFrom(ctx); p != nil && !p.Admin {
		return p
	}
	return nil
}

// visible filters the listings and existence checks of the store by the
// grants of p (restricted): a table without a grant does not exist for p,
// and a namespace exists for p while it or a namespace below it holds a
// table p may see. Pages are cut after filtering, so a page is full
// whenever more visible names follow.
type visible struct {
	s *store
	p *auth.Principal
}

// below returns the tables of ns and of the namespaces below it (every
// table for nil) that p may see.
func (v visible) below(ctx context.Context, ns []string) ([]tableRow, error) {
	rows, err := v.s.tablesBelow(ctx, ns)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(rows, func(t tableRow) bool { return !v.p.Allows(t.namespace, t.name) }), nil
}

func (v visible) requireNamespace(ctx context.Context, ns []string) error {
	rows, err := v.below(ctx, ns)
	if err == nil && len(rows) == 0 {
		err = noSuchNamespace(ns)
	}
	return err
}

func (v visible) listNamespaces(ctx context.Context, parent []string, after string, limit int) ([]string, error) {
	rows, err := v.below(ctx, parent)
	if err != nil {
		return nil, err
	}
	p := joinLevels(parent)
	var names []string
	for _, t := range rows {
		rest := t.namespace
		if p != "" {
			var ok bool
			if rest, ok = strings.CutPrefix(t.namespace, p+"."); !ok {
				continue // a table of parent itself
			}
		}
		names = append(names, strings.SplitN(rest, ".", 2)[0])
	}
	return pageOf(names, after, limit), nil
}

func (v visible) listTables(ctx context.Context, ns []string, after string, limit int) ([]string, error) {
	rows, err := v.below(ctx, ns)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, t := range rows {
		if t.namespace == joinLevels(ns) {
			names = append(names, t.name)
		}
	}
	return pageOf(names, after, limit), nil
}

// pageOf sorts names in byte order (the listings' COLLATE "C"), drops
// duplicates and those up to after, and keeps at most limit (0: all).
func pageOf(names []string, after string, limit int) []string {
	slices.Sort(names)
	names = slices.Compact(names)
	i, _ := slices.BinarySearch(names, after)
	if i < len(names) && names[i] == after {
		i++
	}
	names = names[i:]
	if limit > 0 && len(names) > limit {
		names = names[:limit]
	}
	return names
}

// lister is what the listings and namespace checks read: the store, or
// the store seen through a principal's grants.
type lister interface {
	requireNamespace(ctx context.Context, ns []string) error
	listNamespaces(ctx context.Context, parent []string, after string, limit int) ([]string, error)
	listTables(ctx context.Context, ns []string, after string, limit int) ([]string, error)
}

// lister returns what the request may list.
func (h *Handler) lister(r *http.Request) lister {
	if p := restricted(r.Context()); p != nil {
		return visible{s: h.store, p: p}
	}
	return h.store
}

// allowed reports whether the request's principal may see table name of
// ns; a table it may not see answers as one that does not exist.
func allowed(r *http.Request, ns []string, name string) bool {
	p := restricted(r.Context())
	return p == nil || p.Allows(joinLevels(ns), name)
}

// vended returns the config keys of credentials vended to the request's
// principal for table t (and its dead-letter table when granted), and the
// key prefixes they cover below the warehouse: the tables' locations,
// which are not always their names' (docs/design.md §4.1); none without
// Config.Auth (auth none: the static keys serve).
func (h *Handler) vended(r *http.Request, t Table) (map[string]string, []string, error) {
	p := auth.PrincipalFrom(r.Context())
	if h.cfg.Auth == nil || p == nil {
		return nil, nil, nil
	}
	locations := []string{t.Location}
	if t.DLQLocation != "" && p.Allows(joinLevels(t.Namespace), t.Name+tables.DLQSuffix) {
		locations = append(locations, t.DLQLocation)
	}
	prefixes := make([]string, len(locations))
	for i, loc := range locations {
		key, ok := strings.CutPrefix(loc, h.store.prefix)
		if !ok || key == "" {
			return nil, nil, fmt.Errorf("table %s.%s: location %q is not below the warehouse %s",
				joinLevels(t.Namespace), t.Name, loc, h.store.prefix)
		}
		prefixes[i] = key + "/"
	}
	c, err := h.cfg.Auth.Vend(p, prefixes)
	if err != nil {
		return nil, nil, err
	}
	return map[string]string{
		"s3.access-key-id":               c.AccessKeyID,
		"s3.secret-access-key":           c.SecretAccessKey,
		"s3.session-token":               c.SessionToken,
		"s3.session-token-expires-at-ms": strconv.FormatInt(c.Expiration.UnixMilli(), 10),
	}, prefixes, nil
}

// storageCredential is the spec's StorageCredential.
type storageCredential struct {
	Prefix string            `json:"prefix"`
	Config map[string]string `json:"config"`
}

// storageCredentials lists creds once per prefix, as full locations.
func (h *Handler) storageCredentials(creds map[string]string, prefixes []string) []storageCredential {
	out := make([]storageCredential, len(prefixes))
	for i, p := range prefixes {
		out[i] = storageCredential{Prefix: h.store.prefix + p, Config: creds}
	}
	return out
}

// loadCredentials answers GET /v1/namespaces/{namespace}/tables/{table}/credentials
// (the spec's loadCredentials): fresh credentials for the table, as a
// table load vends them; none under auth none.
func (h *Handler) loadCredentials(w http.ResponseWriter, r *http.Request) {
	ns, name, ok := h.visibleTable(w, r)
	if !ok {
		return
	}
	t, ok := h.loadCommitted(w, r, ns, name)
	if !ok {
		return
	}
	creds, prefixes, err := h.vended(r, t)
	if err != nil {
		h.writeError(w, r, err, logAttrs(ns, name)...)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		StorageCredentials []storageCredential `json:"storage-credentials"`
	}{h.storageCredentials(creds, prefixes)})
}
