package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Errors of Authenticator.Bearer besides ErrTokenInvalid and
// ErrTokenExpired; each answers 401.
var (
	// ErrNoToken: the request has no Authorization: Bearer header.
	ErrNoToken = errors.New("auth: no bearer token (Authorization: Bearer …)")
	// ErrRevoked: the token's principal was revoked (or is gone).
	ErrRevoked = errors.New("auth: principal revoked")
)

// Unauthenticated reports whether err (of Authenticator.Bearer) means the
// caller did not authenticate (401), rather than that Postgres could not
// be asked.
func Unauthenticated(err error) bool {
	return errors.Is(err, ErrNoToken) || errors.Is(err, ErrTokenInvalid) ||
		errors.Is(err, ErrTokenExpired) || errors.Is(err, ErrRevoked)
}

// Challenge is the WWW-Authenticate of a 401 answering err (RFC 6750 §3):
// no error code when the request carried no token, invalid_token else.
func Challenge(err error) string {
	if errors.Is(err, ErrNoToken) {
		return `Bearer realm="mink"`
	}
	return fmt.Sprintf(`Bearer realm="mink", error="invalid_token", error_description=%q`, strings.TrimPrefix(err.Error(), "auth: "))
}

// Authenticator authenticates a node's callers in ModePrincipals: it
// issues bearer tokens (ServeToken), checks them (Bearer) and vends S3
// credentials (Vend).
type Authenticator struct {
	store   *Store
	tokens  *Tokens
	credKey []byte
	credTTL time.Duration
	now     func() time.Time
}

// NewAuthenticator returns the authenticator of a cluster whose secret is
// secret (ClusterSecret), its principals in store. cfg is taken with its
// defaults.
func NewAuthenticator(cfg Config, store *Store, secret []byte) *Authenticator {
	cfg = cfg.WithDefaults()
	return &Authenticator{store: store,
		tokens:  &Tokens{Key: DeriveKey(secret, PurposePrincipalToken), TTL: cfg.TokenTTL},
		credKey: DeriveKey(secret, PurposeCredentials), credTTL: cfg.CredentialsTTL, now: time.Now}
}

// Store returns the principals' store.
func (a *Authenticator) Store() *Store { return a.store }

// Bearer returns the principal of the request's bearer token (RFC 6750
// §2.1). Errors: ErrNoToken, ErrTokenInvalid, ErrTokenExpired, ErrRevoked
// (all Unauthenticated), Postgres's.
func (a *Authenticator) Bearer(ctx context.Context, r *http.Request) (*Principal, error) {
	h := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return nil, ErrNoToken
	}
	name, err := a.tokens.Verify(strings.TrimSpace(token))
	if err != nil {
		return nil, err
	}
	p, err := a.store.Lookup(ctx, name)
	if err != nil {
		return nil, err
	}
	if p == nil {
		return nil, fmt.Errorf("%w: %s", ErrRevoked, name)
	}
	return p, nil
}

// Vend returns S3 credentials for p to read the keys below prefixes (each
// below the warehouse, ending in '/'), valid for credentials_ttl: the
// expiry is rounded down to the minute, so that loads within a minute
// vend the same credentials (and a table load's ETag holds). Errors are
// Vend's.
func (a *Authenticator) Vend(p *Principal, prefixes []string) (Credentials, error) {
	exp := a.now().Add(a.credTTL).Truncate(time.Minute)
	return Vend(a.credKey, p.Name, prefixes, exp)
}

// The OAuth2 token answer's fixed values (Iceberg REST spec,
// OAuthTokenResponse; RFC 8693 §3 for the token type).
const (
	tokenType       = "bearer"
	issuedTokenType = "urn:ietf:params:oauth:token-type:access_token"
)

// tokenResponse is the spec's OAuthTokenResponse.
type tokenResponse struct {
	AccessToken     string `json:"access_token"`
	TokenType       string `json:"token_type"`
	ExpiresIn       int64  `json:"expires_in"`
	IssuedTokenType string `json:"issued_token_type"`
	Scope           string `json:"scope,omitempty"`
}

// oauthError is the spec's OAuthError (RFC 6749 §5.2).
type oauthError struct {
	Error       string `json:"error"`
	Description string `json:"error_description,omitempty"`
}

// maxTokenForm bounds a token request's body.
const maxTokenForm = 64 << 10

// ServeToken answers POST /v1/oauth/tokens (Iceberg REST spec,
// getToken): the OAuth2 client-credentials grant (RFC 6749 §4.4), the
// form-encoded body carrying grant_type=client_credentials and the
// client's id and secret, in the body (client_id, client_secret) or as
// HTTP Basic (RFC 6749 §2.3.1), not both; scope is echoed. Errors are the
// spec's OAuthError: 400 invalid_request or unsupported_grant_type, 401
// invalid_client (unknown client, wrong secret, revoked); 503 when
// Postgres cannot be asked; 405 with Allow: POST and invalid_request for
// any other method (RFC 6749 §3.2: the token endpoint takes POST only).
func (a *Authenticator) ServeToken(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeOAuthError(w, http.StatusMethodNotAllowed, "invalid_request",
			"the token endpoint takes POST (a form with grant_type=client_credentials), not "+r.Method)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxTokenForm)
	if err := r.ParseForm(); err != nil {
		writeOAuthError(w, http.StatusBadRequest, "invalid_request", "the body is not a form: "+err.Error())
		return
	}
	form := r.PostForm
	switch gt := form.Get("grant_type"); gt {
	case "client_credentials":
	case "":
		writeOAuthError(w, http.StatusBadRequest, "invalid_request", "grant_type is missing")
		return
	default:
		writeOAuthError(w, http.StatusBadRequest, "unsupported_grant_type",
			fmt.Sprintf("grant_type %q is not supported; Mink takes client_credentials", gt))
		return
	}
	id, secret := form.Get("client_id"), form.Get("client_secret")
	if bid, bsecret, ok := r.BasicAuth(); ok {
		if id != "" || secret != "" {
			writeOAuthError(w, http.StatusBadRequest, "invalid_request",
				"client credentials both in the Authorization header and in the body")
			return
		}
		// RFC 6749 §2.3.1: both are form-encoded before Basic encoding.
		var err1, err2 error
		id, err1 = url.QueryUnescape(bid)
		secret, err2 = url.QueryUnescape(bsecret)
		if err1 != nil || err2 != nil {
			writeOAuthError(w, http.StatusBadRequest, "invalid_request", "the Basic credentials are not form-encoded")
			return
		}
	}
	if id == "" || secret == "" {
		w.Header().Set("WWW-Authenticate", `Basic realm="mink"`)
		writeOAuthError(w, http.StatusUnauthorized, "invalid_client",
			"no client credentials: send client_id and client_secret (`mink principal create` prints them)")
		return
	}
	p, err := a.store.Authenticate(r.Context(), id, secret)
	if errors.Is(err, ErrInvalidClient) {
		w.Header().Set("WWW-Authenticate", `Basic realm="mink"`)
		writeOAuthError(w, http.StatusUnauthorized, "invalid_client", "unknown client, wrong secret, or revoked principal")
		return
	}
	if err != nil {
		w.Header().Set("Retry-After", "2")
		writeOAuthError(w, http.StatusServiceUnavailable, "temporarily_unavailable", "Mink cannot reach Postgres; retry later")
		return
	}
	token, expiresIn := a.tokens.Issue(p.Name)
	writeTokenJSON(w, http.StatusOK, tokenResponse{AccessToken: token, TokenType: tokenType, ExpiresIn: expiresIn,
		IssuedTokenType: issuedTokenType, Scope: form.Get("scope")})
}

func writeOAuthError(w http.ResponseWriter, status int, code, desc string) {
	writeTokenJSON(w, status, oauthError{Error: code, Description: desc})
}

// writeTokenJSON answers with the headers RFC 6749 §5.1 requires of
// token answers.
func writeTokenJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// BasicCredential splits a credential "CLIENT_ID:SECRET" (iceberg's
// `credential` property) at its first ':'.
func BasicCredential(credential string) (id, secret string, ok bool) {
	id, secret, ok = strings.Cut(credential, ":")
	return id, secret, ok && id != "" && secret != ""
}
