package auth

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	_ "embed"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

//go:embed sql/cluster_secret.sql
var clusterSecretSQL string

// The purposes keys are derived for (DeriveKey): a key signs one kind of
// thing only, so a signature of one kind is never valid as another.
const (
	// PurposeForward signs requests one node forwards to another.
	PurposeForward = "mink forward v1"
	// PurposePrincipalToken signs the catalog's bearer tokens.
	PurposePrincipalToken = "mink token v1"
	// PurposeCredentials derives vended S3 credentials.
	PurposeCredentials = "mink s3 credentials v1"
)

// Querier is a pool, connection or transaction.
type Querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// ClusterSecret returns the cluster's 32-byte secret, creating it when the
// database has none (migration 010). Errors are Postgres's.
func ClusterSecret(ctx context.Context, q Querier) ([]byte, error) {
	fresh := make([]byte, 32)
	if _, err := rand.Read(fresh); err != nil {
		return nil, err
	}
	for range 3 {
		var secret []byte
		err := q.QueryRow(ctx, clusterSecretSQL, fresh).Scan(&secret)
		if errors.Is(err, pgx.ErrNoRows) {
			continue // lost the race to another first caller
		}
		if err != nil {
			return nil, fmt.Errorf("auth: cluster secret: %w", err)
		}
		return secret, nil
	}
	return nil, errors.New("auth: cluster secret: not stored after 3 attempts")
}

// DeriveKey returns the 32-byte key of one purpose (Purpose*):
// HMAC-SHA256(secret, purpose).
func DeriveKey(secret []byte, purpose string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(purpose))
	return m.Sum(nil)
}
