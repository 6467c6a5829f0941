package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// Errors of Tokens.Verify.
var (
	ErrTokenInvalid = errors.New("auth: invalid bearer token")
	ErrTokenExpired = errors.New("auth: bearer token expired")
)

// tokenPrefix starts every bearer token: its format and version.
const tokenPrefix = "mink1."

// Tokens issues and checks the catalog's bearer tokens. A token is
// stateless: "mink1." + base64url(JSON {sub, iat, exp}) + "." +
// base64url(HMAC-SHA256(key, everything before the last '.')), key being
// DeriveKey(secret, PurposePrincipalToken); any node checks it without
// asking another. Times are Unix seconds of the issuing node's clock (a
// token is not a lease: a clock a few seconds off shifts its expiry by as
// much).
type Tokens struct {
	// Key is DeriveKey(secret, PurposePrincipalToken).
	Key []byte
	// TTL is a token's lifetime (token_ttl).
	TTL time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

type tokenClaims struct {
	Sub string `json:"sub"`
	Iat int64  `json:"iat"`
	Exp int64  `json:"exp"`
}

func (t *Tokens) now() time.Time {
	if t.Now != nil {
		return t.Now()
	}
	return time.Now()
}

// Issue returns a token for principal name and its lifetime in whole
// seconds (OAuth2's expires_in).
func (t *Tokens) Issue(name string) (token string, expiresIn int64) {
	now := t.now()
	expiresIn = int64((t.TTL + time.Second - 1) / time.Second)
	payload, _ := json.Marshal(tokenClaims{Sub: name, Iat: now.Unix(), Exp: now.Unix() + expiresIn})
	body := tokenPrefix + base64.RawURLEncoding.EncodeToString(payload)
	return body + "." + base64.RawURLEncoding.EncodeToString(t.mac(body)), expiresIn
}

func (t *Tokens) mac(body string) []byte {
	m := hmac.New(sha256.New, t.Key)
	m.Write([]byte(body))
	return m.Sum(nil)
}

// Verify returns the principal name a token was issued to. Errors:
// ErrTokenInvalid (not a token, or not signed by this cluster's key),
// ErrTokenExpired.
func (t *Tokens) Verify(token string) (string, error) {
	i := strings.LastIndexByte(token, '.')
	if !strings.HasPrefix(token, tokenPrefix) || i < len(tokenPrefix) {
		return "", ErrTokenInvalid
	}
	body := token[:i]
	sig, err := base64.RawURLEncoding.DecodeString(token[i+1:])
	if err != nil || !hmac.Equal(sig, t.mac(body)) {
		return "", ErrTokenInvalid
	}
	payload, err := base64.RawURLEncoding.DecodeString(body[len(tokenPrefix):])
	if err != nil {
		return "", ErrTokenInvalid
	}
	var c tokenClaims
	if json.Unmarshal(payload, &c) != nil || c.Sub == "" {
		return "", ErrTokenInvalid
	}
	if t.now().Unix() >= c.Exp {
		return "", ErrTokenExpired
	}
	return c.Sub, nil
}
