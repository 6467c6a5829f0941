package auth

import (
	"errors"
	"time"
)

// Credentials are vended S3 credentials (Iceberg REST spec,
// X-Iceberg-Access-Delegation: vended-credentials): valid for reads of the
// keys below Prefixes (below the warehouse) until Expiration, signed with
// AWS Signature V4.
type Credentials struct {
	AccessKeyID     string
	SecretAccessKey string
	SessionToken    string
	Expiration      time.Time
	// Prefixes are the key prefixes (below the warehouse, each ending in
	// '/') the credentials may read: a table's location.
	Prefixes []string
}

// Vend returns credentials for principal to read the keys below prefixes
// until expiration, derived from key (DeriveKey(secret,
// PurposeCredentials)); every node can check them without state.
func Vend(key []byte, principal string, prefixes []string, expiration time.Time) (Credentials, error) {
	return Credentials{}, errors.New("auth: Vend: not built yet")
}
