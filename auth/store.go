package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	_ "embed"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The store's queries (migration 011).
var (
	//go:embed sql/principal_create.sql
	principalCreateSQL string
	//go:embed sql/principal_list.sql
	principalListSQL string
	//go:embed sql/principal_revoke.sql
	principalRevokeSQL string
	//go:embed sql/principal_by_client.sql
	principalByClientSQL string
	//go:embed sql/principal_by_name.sql
	principalByNameSQL string
)

// Errors of the store.
var (
	// ErrExists: a principal of that name exists or existed (revoked
	// principals keep their names).
	ErrExists = errors.New("auth: principal exists")
	// ErrNoPrincipal: no principal of that name.
	ErrNoPrincipal = errors.New("auth: no such principal")
	// ErrInvalidClient: unknown client id, wrong secret, or a revoked
	// principal (OAuth2's invalid_client, RFC 6749 §5.2).
	ErrInvalidClient = errors.New("auth: invalid client credentials")
)

var (
	principalName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_-]{0,63}$`)
	// grantLevel is a namespace level or table name (tables.ParseName's
	// rule); a table's last part may name its dead-letter table.
	grantLevel = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_-]{0,127}$`)
)

// CheckName returns an error for a principal name other than 1–64 of
// [A-Za-z0-9_-], not starting with '-'.
func CheckName(name string) error {
	if !principalName.MatchString(name) {
		return fmt.Errorf("principal name %q: want 1–64 of A-Z a-z 0-9 _ -, not starting with -", name)
	}
	return nil
}

// CheckGrant returns an error for a grant other than "*" (every table),
// "NS.*" (every table of namespace NS, whose levels are joined by '.', and
// of the namespaces below it) or "NS.TABLE" (that table; "NS.TABLE~dlq"
// its dead-letter table), with names as tables.ParseName takes them.
func CheckGrant(g string) error {
	if g == "*" {
		return nil
	}
	parts := strings.Split(g, ".")
	if len(parts) < 2 {
		return fmt.Errorf("grant %q: want NS.*, NS.TABLE or *", g)
	}
	last := parts[len(parts)-1]
	for _, l := range parts[:len(parts)-1] {
		if !grantLevel.MatchString(l) {
			return fmt.Errorf("grant %q: namespace level %q is not a Mink name", g, l)
		}
	}
	if last != "*" && !grantLevel.MatchString(strings.TrimSuffix(last, "~dlq")) {
		return fmt.Errorf("grant %q: %q is neither * nor a table name", g, last)
	}
	return nil
}

// PrincipalInfo is a principal as `mink principal list` shows it.
type PrincipalInfo struct {
	Name     string     `json:"name"`
	ClientID string     `json:"client_id"`
	Admin    bool       `json:"admin"`
	Grants   []string   `json:"grants"`
	Created  time.Time  `json:"created_at"`
	Revoked  *time.Time `json:"revoked_at,omitempty"`
}

// CacheTTL bounds how long a node trusts what it read of a principal:
// a revocation or a grant change takes effect within it.
const CacheTTL = time.Second

// Store is the principals in Postgres (migration 011), with a short cache
// of lookups by name (CacheTTL).
type Store struct {
	pool *pgxpool.Pool
	now  func() time.Time

	mu    sync.Mutex
	cache map[string]cached
}

type cached struct {
	p    *Principal // nil: no such principal, or revoked
	read time.Time
}

// NewStore returns the store of pool's database (migrated by pgstore).
func NewStore(pool *pgxpool.Pool) *Store {
	return &Store{pool: pool, now: time.Now, cache: map[string]cached{}}
}

// Create stores a new principal and returns its client id and secret
// (both base64url, without padding): the secret is shown once and kept
// as its SHA-256 only. Errors: CheckName's, CheckGrant's, ErrExists,
// Postgres's.
func (s *Store) Create(ctx context.Context, name string, grants []string, admin bool) (clientID, secret string, err error) {
	if err := CheckName(name); err != nil {
		return "", "", err
	}
	for _, g := range grants {
		if err := CheckGrant(g); err != nil {
			return "", "", err
		}
	}
	var id [12]byte
	var sec [32]byte
	_, _ = rand.Read(id[:]) // crypto/rand.Read never fails (Go 1.24+)
	_, _ = rand.Read(sec[:])
	clientID = base64.RawURLEncoding.EncodeToString(id[:])
	secret = base64.RawURLEncoding.EncodeToString(sec[:])
	hash := sha256.Sum256([]byte(secret))
	if grants == nil {
		grants = []string{}
	}
	var got string
	err = s.pool.QueryRow(ctx, principalCreateSQL, name, clientID, hash[:], admin, grants).Scan(&got)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", "", fmt.Errorf("%w: %s", ErrExists, name)
	}
	if err != nil {
		return "", "", fmt.Errorf("auth: create principal %s: %w", name, err)
	}
	return clientID, secret, nil
}

// List returns every principal, revoked ones included, by name.
func (s *Store) List(ctx context.Context) ([]PrincipalInfo, error) {
	rows, err := s.pool.Query(ctx, principalListSQL)
	if err != nil {
		return nil, fmt.Errorf("auth: list principals: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (PrincipalInfo, error) {
		var p PrincipalInfo
		err := r.Scan(&p.Name, &p.ClientID, &p.Admin, &p.Grants, &p.Created, &p.Revoked)
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("auth: list principals: %w", err)
	}
	return out, nil
}

// Revoke revokes the principal name and returns when it was revoked (the
// first revocation's time, when it already was). Its tokens and vended
// credentials are refused from then on, by every node within CacheTTL.
// Errors: ErrNoPrincipal, Postgres's.
func (s *Store) Revoke(ctx context.Context, name string) (time.Time, error) {
	var at time.Time
	err := s.pool.QueryRow(ctx, principalRevokeSQL, name).Scan(&at)
	if errors.Is(err, pgx.ErrNoRows) {
		return at, fmt.Errorf("%w: %s", ErrNoPrincipal, name)
	}
	if err != nil {
		return at, fmt.Errorf("auth: revoke principal %s: %w", name, err)
	}
	s.mu.Lock()
	delete(s.cache, name)
	s.mu.Unlock()
	return at, nil
}

// Authenticate returns the principal whose client id and secret these
// are. Errors: ErrInvalidClient (unknown client id, wrong secret,
// revoked), Postgres's.
func (s *Store) Authenticate(ctx context.Context, clientID, secret string) (*Principal, error) {
	p := &Principal{}
	var hash []byte
	var revoked bool
	err := s.pool.QueryRow(ctx, principalByClientSQL, clientID).Scan(&p.Name, &hash, &p.Admin, &p.Grants, &revoked)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, ErrInvalidClient
	}
	if err != nil {
		return nil, fmt.Errorf("auth: look up client: %w", err)
	}
	got := sha256.Sum256([]byte(secret))
	if subtle.ConstantTimeCompare(got[:], hash) != 1 || revoked {
		return nil, ErrInvalidClient
	}
	return p, nil
}

// Lookup returns the principal name, or nil when there is none or it is
// revoked. What it read is trusted for CacheTTL. Errors are Postgres's.
func (s *Store) Lookup(ctx context.Context, name string) (*Principal, error) {
	now := s.now()
	s.mu.Lock()
	c, ok := s.cache[name]
	s.mu.Unlock()
	if ok && now.Sub(c.read) < CacheTTL {
		return c.p, nil
	}
	p := &Principal{Name: name}
	var clientID string
	var revoked bool
	err := s.pool.QueryRow(ctx, principalByNameSQL, name).Scan(&clientID, &p.Admin, &p.Grants, &revoked)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		p = nil
	case err != nil:
		return nil, fmt.Errorf("auth: look up principal %s: %w", name, err)
	case revoked:
		p = nil
	}
	s.mu.Lock()
	if len(s.cache) > 10000 {
		clear(s.cache) // a bound; names are few in practice
	}
	s.cache[name] = cached{p: p, read: now}
	s.mu.Unlock()
	return p, nil
}

// Active reports whether the principal name exists and is not revoked
// (within CacheTTL): the S3 API checks it for vended credentials.
func (s *Store) Active(ctx context.Context, name string) (bool, error) {
	p, err := s.Lookup(ctx, name)
	return p != nil, err
}
