package auth

import (
	"context"
	"strings"
)

// Mode is how a node authenticates its callers (--auth).
type Mode string

const (
	// ModePrincipals (the default): the catalog and the admin API need a
	// principal's bearer token, the S3 API a signature (AWS Signature V4)
	// by vended credentials.
	ModePrincipals Mode = "principals"
	// ModeNone: every caller may read everything (`--auth none`).
	ModeNone Mode = "none"
)

// Principal is an authenticated caller of the catalog, the admin API or
// the S3 API.
type Principal struct {
	// Name is the principal's name (mink principal create NAME).
	Name string
	// Admin principals may use the admin API and see every table.
	Admin bool
	// Grants are the tables the principal may read: "NS.*" (every table of
	// namespace NS and of the namespaces below it) or "NS.TABLE" (that
	// table; its dead-letter table is "NS.TABLE~dlq").
	Grants []string
}

// Allows reports whether p may read the table name of namespace ns
// (levels joined by '.').
func (p *Principal) Allows(ns, name string) bool {
	if p.Admin {
		return true
	}
	full := ns + "." + name
	for _, g := range p.Grants {
		if g == full {
			return true
		}
		if prefix, ok := strings.CutSuffix(g, "*"); ok && strings.HasPrefix(full, prefix) {
			return true
		}
	}
	return false
}

type principalKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the principal ctx carries, or nil when there is
// none (auth none, or no one authenticated).
func PrincipalFrom(ctx context.Context) *Principal {
	p, _ := ctx.Value(principalKey{}).(*Principal)
	return p
}
