package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base32"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Credentials are vended S3 credentials (Iceberg REST spec,
// X-Iceberg-Access-Delegation: vended-credentials): valid for reads of the
// keys below Prefixes (below the warehouse) until Expiration, signed with
// AWS Signature V4.
type Credentials struct {
	// AccessKeyID is "MINK" and 16 upper-case letters and digits (20
	// characters, the shape of an AWS access key id), derived from the
	// rest: the same principal, prefixes and expiration give the same id.
	AccessKeyID string
	// SecretAccessKey is 40 base64 characters, derived from the key, the
	// access key id and the session token's content (never stored).
	SecretAccessKey string
	// SessionToken carries everything else, MACed (base64url, a few
	// hundred bytes); the S3 client sends it as X-Amz-Security-Token.
	SessionToken string
	// Expiration is when the credentials stop working (whole seconds).
	Expiration time.Time
	// Prefixes are the key prefixes (below the warehouse, each ending in
	// '/') the credentials may read: a table's location.
	Prefixes []string
	// Principal is the name of the principal the credentials were vended
	// to; a revoked principal's credentials stop working (Verifier.Active).
	Principal string
}

// Limits of vended credentials, so a token stays well under common
// header limits (8 KiB) and a forged one is rejected before any work.
const (
	maxPrincipal = 256
	maxPrefixes  = 32
	maxPrefix    = 1024
	maxToken     = 8 << 10
)

const (
	tokenVersion = 1
	// akidPrefix starts every access key id Mink vends.
	akidPrefix = "MINK"
	akidLen    = 20
	// Domain separation of the two HMACs under the one credentials key.
	labelMAC    = "mink s3 token mac\x00"
	labelSecret = "mink s3 secret\x00"
	labelAKID   = "mink s3 access key id\x00"
)

// Vend returns credentials for principal to read the keys below prefixes
// until expiration (truncated to the second), derived from key
// (DeriveKey(secret, PurposeCredentials)); every node can check them
// without state (ParseToken, Verifier).
//
// The session token is base64url(payload ‖ HMAC-SHA256(key, payload)),
// payload = version 1, expiration (Unix seconds), access key id,
// principal, prefixes; the secret access key is HMAC-SHA256(key, payload)
// under another label, so the server recomputes it from the token the
// request carries. Errors: an empty key or principal, no prefix, a prefix
// that is empty, starts with '/', does not end with '/', or has an empty,
// "." or ".." segment, or a token over 8 KiB (ParseToken's limit).
func Vend(key []byte, principal string, prefixes []string, expiration time.Time) (Credentials, error) {
	if len(key) == 0 {
		return Credentials{}, errors.New("auth: vend: no credentials key")
	}
	if principal == "" || len(principal) > maxPrincipal {
		return Credentials{}, fmt.Errorf("auth: vend: principal name must be 1 to %d bytes", maxPrincipal)
	}
	if len(prefixes) == 0 || len(prefixes) > maxPrefixes {
		return Credentials{}, fmt.Errorf("auth: vend: 1 to %d prefixes are needed, got %d", maxPrefixes, len(prefixes))
	}
	for _, p := range prefixes {
		if err := checkPrefix(p); err != nil {
			return Credentials{}, err
		}
	}
	c := Credentials{
		Expiration: time.Unix(expiration.Unix(), 0).UTC(),
		Prefixes:   append([]string(nil), prefixes...),
		Principal:  principal,
	}
	// The access key id is a function of the rest, so the same grant and
	// expiry vend the same credentials: a table load's ETag holds while
	// they do (a revalidating engine gets 304, not new keys).
	c.AccessKeyID = strings.Repeat("0", akidLen) // fixed width while it is derived
	idMAC := mac(key, labelAKID, encodePayload(c))
	c.AccessKeyID = akidPrefix + base32.StdEncoding.EncodeToString(idMAC)[:akidLen-len(akidPrefix)]
	payload := encodePayload(c)
	c.SessionToken = base64.RawURLEncoding.EncodeToString(append(payload, mac(key, labelMAC, payload)...))
	if len(c.SessionToken) > maxToken {
		return Credentials{}, fmt.Errorf("auth: vend: the session token would be %d bytes, over %d", len(c.SessionToken), maxToken)
	}
	c.SecretAccessKey = secretOf(key, payload)
	return c, nil
}

// ParseToken checks a session token's MAC under key and returns the
// credentials it carries, secret access key included. It does not check
// the expiration. Errors: ErrInvalidToken.
func ParseToken(key []byte, token string) (Credentials, error) {
	if len(key) == 0 || len(token) > maxToken {
		return Credentials{}, ErrInvalidToken
	}
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(raw) < sha256.Size {
		return Credentials{}, ErrInvalidToken
	}
	payload, sum := raw[:len(raw)-sha256.Size], raw[len(raw)-sha256.Size:]
	if !hmac.Equal(sum, mac(key, labelMAC, payload)) {
		return Credentials{}, ErrInvalidToken
	}
	c, ok := decodePayload(payload)
	if !ok {
		// A MACed payload always decodes; this is a key reused by another
		// version's format.
		return Credentials{}, ErrInvalidToken
	}
	c.SessionToken = token
	c.SecretAccessKey = secretOf(key, payload)
	return c, nil
}

// ErrInvalidToken: a session token Mink did not vend under this key (or
// one altered since).
var ErrInvalidToken = errors.New("auth: invalid session token")

// AllowsKey reports whether c may read key (below the warehouse): it is
// one of the files of a table whose location is one of c's prefixes
// (<prefix>metadata/<file> or <prefix>data/<partition>/<file>) and has no
// empty, "." or ".." segment (so a key cannot climb out of its prefix).
func (c *Credentials) AllowsKey(key string) bool {
	if !cleanKey(key) {
		return false
	}
	for _, p := range c.Prefixes {
		if rest, ok := strings.CutPrefix(key, p); ok && tableFile(rest) {
			return true
		}
	}
	return false
}

// tableFile reports whether rest, a key below a table's location, names
// one of the table's own files: metadata/<file> or data/<partition>/<file>
// (the shapes the S3 API serves, objects.classify). A key further down
// (x/t1/sub/metadata/… below x/t1/) belongs to no table of the grant, so
// a prefix never reaches another table's files even where locations nest
// (tables refuses such locations too).
func tableFile(rest string) bool {
	dir, file, ok := strings.Cut(rest, "/")
	if !ok {
		return false
	}
	switch dir {
	case "metadata":
		return !strings.Contains(file, "/")
	case "data":
		part, name, ok := strings.Cut(file, "/")
		if !ok || part == "" || strings.Contains(name, "/") {
			return false
		}
		for _, c := range part {
			if c < '0' || c > '9' {
				return false
			}
		}
		return true
	}
	return false
}

func checkPrefix(p string) error {
	if len(p) > maxPrefix || !strings.HasSuffix(p, "/") || !cleanKey(strings.TrimSuffix(p, "/")) {
		return fmt.Errorf("auth: vend: prefix %q is not a clean key prefix ending in '/'", p)
	}
	return nil
}

// cleanKey reports whether key is non-empty and has no empty, "." or ".."
// segment (no leading, trailing or double '/').
func cleanKey(key string) bool {
	for seg := range strings.SplitSeq(key, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

func mac(key []byte, label string, payload []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(label))
	m.Write(payload)
	return m.Sum(nil)
}

// secretOf is the secret access key of a token's payload: 30 bytes of its
// HMAC, 40 base64 characters like an AWS secret.
func secretOf(key, payload []byte) string {
	return base64.StdEncoding.EncodeToString(mac(key, labelSecret, payload)[:30])
}

func encodePayload(c Credentials) []byte {
	b := []byte{tokenVersion}
	b = binary.BigEndian.AppendUint64(b, uint64(c.Expiration.Unix()))
	b = append(b, c.AccessKeyID...)
	b = appendString(b, c.Principal)
	b = binary.AppendUvarint(b, uint64(len(c.Prefixes)))
	for _, p := range c.Prefixes {
		b = appendString(b, p)
	}
	return b
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func decodePayload(b []byte) (Credentials, bool) {
	if len(b) < 1+8+akidLen || b[0] != tokenVersion {
		return Credentials{}, false
	}
	c := Credentials{
		Expiration:  time.Unix(int64(binary.BigEndian.Uint64(b[1:9])), 0).UTC(),
		AccessKeyID: string(b[9 : 9+akidLen]),
	}
	b = b[9+akidLen:]
	var ok bool
	if c.Principal, b, ok = readString(b, maxPrincipal); !ok {
		return Credentials{}, false
	}
	n, w := binary.Uvarint(b)
	if w <= 0 || n == 0 || n > maxPrefixes {
		return Credentials{}, false
	}
	b = b[w:]
	for range n {
		var p string
		if p, b, ok = readString(b, maxPrefix); !ok {
			return Credentials{}, false
		}
		c.Prefixes = append(c.Prefixes, p)
	}
	return c, len(b) == 0
}

func readString(b []byte, limit int) (string, []byte, bool) {
	n, w := binary.Uvarint(b)
	if w <= 0 || n > uint64(limit) || n > uint64(len(b)-w) {
		return "", nil, false
	}
	return string(b[w : w+int(n)]), b[w+int(n):], true
}
