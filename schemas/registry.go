// Package schemas holds what Mink knows of Schema Registry schemas: the
// registry client (registry.go), its settings (config.go), the schemas
// stored by id, and the rules by which a table's schema evolves.
package schemas

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/minkhq/mink/codec/wire"
	"github.com/minkhq/mink/internal/tlsfiles"
	"github.com/minkhq/mink/outage"
)

// RequestTimeout bounds one HTTP request to the registry, the answer's
// body included.
const RequestTimeout = 10 * time.Second

// MaxReferenceDepth bounds the chain of schema references SchemaByID
// follows: a deeper chain is refused (ErrInvalid), as no real schema
// nests so deep and a corrupt registry must not make Mink recurse without
// bound.
const MaxReferenceDepth = 32

// Errors callers branch on. Every error of a Registry wraps exactly one of
// ErrNotFound, ErrInvalid or outage.ErrUnavailable.
var (
	// ErrNotFound: the registry answered that the schema id, subject or
	// version does not exist (HTTP 404 with a Schema Registry error code
	// 40401 subject, 40402 version, 40403 schema, or another 404xx code).
	// A record naming such an id is a dead letter, with the reason.
	ErrNotFound = errors.New("not found in the schema registry")
	// ErrInvalid: the registry answered, but with a schema that cannot be
	// used: its references form a cycle or are nested deeper than
	// MaxReferenceDepth. Like ErrNotFound, a record naming it is a dead
	// letter.
	ErrInvalid = errors.New("unusable schema in the schema registry")
)

// Registry reads schemas from a Confluent-compatible Schema Registry
// through franz-go's sr client. It keeps nothing in memory: every call
// asks the registry (the schemas Mink has used are kept in PostgreSQL by
// the caller). Safe for concurrent use.
//
// Errors: ErrNotFound and ErrInvalid as documented on them; any other
// failure — connection refused, a timeout, a 5xx, 401 or 403, a 404
// without a registry error code (a wrong URL path), an answer that is not
// the registry's JSON — wraps outage.ErrUnavailable with the registry's
// message: no record is ever dead-lettered because the registry is down
// or misconfigured; the caller retries.
type Registry struct {
	cl *sr.Client
	tr *http.Transport
	// url is the base URL without credentials, for messages.
	url string
}

// NewRegistry returns a Registry for cfg, after cfg.Validate. It does not
// connect. cfg.URL must be set: callers check it (empty means no
// registry).
func NewRegistry(cfg RegistryConfig) (*Registry, error) {
	if cfg.URL == "" {
		return nil, errors.New("schemas: no registry URL")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	u, _ := url.Parse(cfg.URL) // checked by Validate
	user, pass, basic := cfg.basicAuth(u)
	u.User = nil // never in a request line, a log line or an error
	base := strings.TrimRight(u.String(), "/")

	tr := http.DefaultTransport.(*http.Transport).Clone()
	if cfg.CAFile != "" || cfg.CertFile != "" {
		tc, err := tlsfiles.Client(cfg.CAFile, cfg.CertFile, cfg.KeyFile, "")
		if err != nil {
			return nil, fmt.Errorf("schemas: %w", err)
		}
		tr.TLSClientConfig = tc
	}
	opts := []sr.ClientOpt{sr.URLs(base), sr.UserAgent("mink"),
		sr.HTTPClient(&http.Client{Timeout: RequestTimeout, Transport: tr})}
	if basic {
		opts = append(opts, sr.BasicAuth(user, pass))
	}
	if cfg.Token != "" {
		opts = append(opts, sr.BearerToken(cfg.Token))
	}
	cl, err := sr.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("schemas: %w", err)
	}
	return &Registry{cl: cl, tr: tr, url: base}, nil
}

// URL returns the registry's base URL, without credentials.
func (r *Registry) URL() string { return r.url }

// Close closes the idle connections to the registry. The Registry still
// works afterwards (it opens new ones); a node calls Close when it stops.
func (r *Registry) Close() { r.tr.CloseIdleConnections() }

// SchemaByID returns the schema with registry id id (GET
// /schemas/ids/{id}), its references resolved recursively: each is
// fetched by subject and version (GET /subjects/{s}/versions/{v}, soft-
// deleted versions included, since records written with them still
// exist). A schema two references share is fetched once. Errors: see
// Registry.
func (r *Registry) SchemaByID(ctx context.Context, id int) (*wire.Schema, error) {
	s, err := r.cl.SchemaByID(ctx, id)
	if err != nil {
		return nil, r.fail(fmt.Sprintf("schema id %d", id), err)
	}
	res := resolver{r: r, done: map[subjectVersion]*wire.Schema{}, active: map[subjectVersion]bool{}}
	refs, err := res.references(ctx, s.References, 1)
	if err != nil {
		return nil, fmt.Errorf("schemas: schema id %d: %w", id, err)
	}
	return &wire.Schema{ID: id, Type: s.Type.String(), Text: s.Schema, References: refs}, nil
}

// Latest returns the latest version of subject (GET
// /subjects/{subject}/versions/latest), with its id and its references
// resolved as by SchemaByID. Soft-deleted versions do not count. Errors:
// see Registry; a subject without versions wraps ErrNotFound.
func (r *Registry) Latest(ctx context.Context, subject string) (*wire.Schema, error) {
	ss, err := r.cl.SchemaByVersion(ctx, subject, -1)
	if err != nil {
		return nil, r.fail(fmt.Sprintf("latest version of subject %q", subject), err)
	}
	key := subjectVersion{ss.Subject, ss.Version}
	res := resolver{r: r, done: map[subjectVersion]*wire.Schema{}, active: map[subjectVersion]bool{key: true}}
	refs, err := res.references(ctx, ss.References, 1)
	if err != nil {
		return nil, fmt.Errorf("schemas: subject %q version %d: %w", subject, ss.Version, err)
	}
	return &wire.Schema{ID: ss.ID, Type: ss.Type.String(), Text: ss.Schema.Schema, References: refs}, nil
}

// SubjectVersion is one version of a registry subject.
type SubjectVersion struct {
	// Version is the subject's version number, from 1.
	Version int
	// Schema is the version's schema, with its registry id.
	Schema *wire.Schema
	// Deleted: the version is soft-deleted (records written with it may
	// still be retained).
	Deleted bool
}

// Versions returns every version of subject, oldest first, soft-deleted
// ones included (GET /subjects/{subject}/versions?deleted=true, then each
// version), references resolved as by SchemaByID. Errors: see Registry; a
// subject without versions wraps ErrNotFound.
func (r *Registry) Versions(ctx context.Context, subject string) ([]SubjectVersion, error) {
	all, err := r.cl.Schemas(sr.WithParams(ctx, sr.ShowDeleted), subject)
	if err != nil {
		return nil, r.fail(fmt.Sprintf("versions of subject %q", subject), err)
	}
	live, err := r.cl.Schemas(ctx, subject)
	if err != nil && !errors.Is(r.fail("", err), ErrNotFound) {
		return nil, r.fail(fmt.Sprintf("versions of subject %q", subject), err)
	}
	out := make([]SubjectVersion, 0, len(all))
	for _, ss := range all {
		key := subjectVersion{ss.Subject, ss.Version}
		res := resolver{r: r, done: map[subjectVersion]*wire.Schema{}, active: map[subjectVersion]bool{key: true}}
		refs, err := res.references(ctx, ss.References, 1)
		if err != nil {
			return nil, fmt.Errorf("schemas: subject %q version %d: %w", subject, ss.Version, err)
		}
		deleted := !slices.ContainsFunc(live, func(l sr.SubjectSchema) bool { return l.Version == ss.Version })
		out = append(out, SubjectVersion{Version: ss.Version, Deleted: deleted,
			Schema: &wire.Schema{ID: ss.ID, Type: ss.Type.String(), Text: ss.Schema.Schema, References: refs}})
	}
	slices.SortFunc(out, func(a, b SubjectVersion) int { return a.Version - b.Version })
	return out, nil
}

// Subjects returns the subjects registry id id is a version of (GET
// /schemas/ids/{id}/versions, soft-deleted versions included). Errors:
// see Registry.
func (r *Registry) Subjects(ctx context.Context, id int) ([]string, error) {
	vs, err := r.cl.SchemaVersionsByID(ctx, id)
	if err != nil {
		return nil, r.fail(fmt.Sprintf("subjects of schema id %d", id), err)
	}
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		if !slices.Contains(out, v.Subject) {
			out = append(out, v.Subject)
		}
	}
	return out, nil
}

type subjectVersion struct {
	subject string
	version int
}

// resolver resolves the references of one schema. done holds what it has
// fetched; active the references on the path from the root to the one
// being resolved, so that a cycle is found instead of followed forever.
type resolver struct {
	r      *Registry
	done   map[subjectVersion]*wire.Schema
	active map[subjectVersion]bool
}

func (res *resolver) references(ctx context.Context, refs []sr.SchemaReference, depth int) ([]wire.Reference, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	if depth > MaxReferenceDepth {
		return nil, fmt.Errorf("%w: references nested deeper than %d", ErrInvalid, MaxReferenceDepth)
	}
	out := make([]wire.Reference, 0, len(refs))
	for _, ref := range refs {
		key := subjectVersion{ref.Subject, ref.Version}
		if res.active[key] {
			return nil, fmt.Errorf("%w: reference %q (subject %q version %d) refers back to itself",
				ErrInvalid, ref.Name, ref.Subject, ref.Version)
		}
		s, ok := res.done[key]
		if !ok {
			what := fmt.Sprintf("reference %q (subject %q version %d)", ref.Name, ref.Subject, ref.Version)
			ss, err := res.r.cl.SchemaByVersion(sr.WithParams(ctx, sr.ShowDeleted), ref.Subject, ref.Version)
			if err != nil {
				return nil, res.r.fail(what, err)
			}
			res.active[key] = true
			nested, err := res.references(ctx, ss.References, depth+1)
			delete(res.active, key)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", what, err)
			}
			s = &wire.Schema{ID: ss.ID, Type: ss.Type.String(), Text: ss.Schema.Schema, References: nested}
			res.done[key] = s
		}
		out = append(out, wire.Reference{Name: ref.Name, Subject: ref.Subject, Version: ref.Version, Schema: *s})
	}
	return out, nil
}

// fail classifies an error of the sr client for what (e.g. "schema id
// 7"): ErrNotFound when the registry says it does not exist, else
// outage.ErrUnavailable.
func (r *Registry) fail(what string, err error) error {
	var re *sr.ResponseError
	if !errors.As(err, &re) {
		// Transport errors quote the URL, which carries no credentials.
		return outage.Mark(fmt.Errorf("schemas: registry %s: %s: %w", r.url, what, err))
	}
	// A 404 without a registry error code is a wrong URL (a proxy's page),
	// not an answer about the schema.
	if re.StatusCode == http.StatusNotFound && sr.IsNotFoundError(re.ErrorCode) {
		return fmt.Errorf("schemas: %s: %w: %s (error code %d)", what, ErrNotFound, re.Error(), re.ErrorCode)
	}
	msg := re.Error()
	if re.ErrorCode == 0 && len(msg) > 200 {
		msg = strings.ToValidUTF8(msg[:200], "") + "…" // an HTML error page
	}
	return outage.Mark(fmt.Errorf("schemas: registry %s: %s: HTTP %d: %s", r.url, what, re.StatusCode, msg))
}
