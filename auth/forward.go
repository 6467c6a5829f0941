package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// Headers of a request one node forwards to another (docs/design.md §5,
// forwarding): SignForward sets them, VerifyForward checks them.
const (
	// ForwardedHeader marks a forwarded request; its value is the id of
	// the node that forwarded it.
	ForwardedHeader = "X-Mink-Forwarded"
	// ForwardTimeHeader is when the request was signed, in Unix seconds.
	ForwardTimeHeader = "X-Mink-Forward-Time"
	// ForwardSignatureHeader is the request's signature: lowercase hex of
	// HMAC-SHA256(key, ForwardMessage(...)).
	ForwardSignatureHeader = "X-Mink-Forward-Signature"
)

// ForwardWindow is how far a forwarded request's time may be from the
// receiver's clock, either way. The nodes' local clocks are used, not
// Postgres's (which decides leases, docs/design.md §3.1): a signature is
// checked on every request, where a round trip to Postgres would cost
// more than it protects. A forward is sent the moment it is signed and
// NTP keeps the nodes' clocks within well under a second, so a minute
// tolerates any sane skew while keeping the window in which a captured
// request can be replayed to its target short.
const ForwardWindow = 60 * time.Second

// ErrForward is wrapped by every error of VerifyForward: the request is
// not one a node of this cluster forwarded.
var ErrForward = errors.New("auth: not a request forwarded by a node of this cluster")

// ForwardMessage is what a forwarded request's signature covers: the
// method, the request URI as sent (escaped path and raw query), the
// forwarding node's id (from, the ForwardedHeader value), the id of the
// node it is sent to (to: a replay to another node does not verify) and
// the time in Unix seconds, joined by newlines after the line
// "mink-forward".
func ForwardMessage(method, requestURI, from, to string, unix int64) []byte {
	return fmt.Appendf(nil, "mink-forward\n%s\n%s\n%s\n%s\n%d", method, requestURI, from, to, unix)
}

// SignForward marks r as forwarded by node from to node to and signs it
// with key (DeriveKey(secret, PurposeForward)), at the local clock's time.
// Call it once r's URL is final: the signature covers r.URL.RequestURI().
func SignForward(key []byte, r *http.Request, from, to string) {
	now := time.Now().Unix()
	r.Header.Set(ForwardedHeader, from)
	r.Header.Set(ForwardTimeHeader, strconv.FormatInt(now, 10))
	r.Header.Set(ForwardSignatureHeader, forwardMAC(key, r.Method, r.URL.RequestURI(), from, to, now))
}

// VerifyForward returns the id of the node that forwarded r when r carries
// a valid signature by key (SignForward) for node self (the receiver's own
// id) made within ForwardWindow of the local clock. Errors wrap
// ErrForward: no ForwardedHeader, no or malformed time or signature, a
// time outside the window, or a signature that does not match (another
// key, another target node, or a method, URI, node or time changed since
// signing). An empty key verifies nothing.
func VerifyForward(key []byte, r *http.Request, self string) (node string, err error) {
	node = r.Header.Get(ForwardedHeader)
	if node == "" {
		return "", fmt.Errorf("%w: no %s", ErrForward, ForwardedHeader)
	}
	if len(key) == 0 {
		return "", fmt.Errorf("%w: this node has no forwarding key", ErrForward)
	}
	unix, err := strconv.ParseInt(r.Header.Get(ForwardTimeHeader), 10, 64)
	if err != nil {
		return "", fmt.Errorf("%w: no or bad %s", ErrForward, ForwardTimeHeader)
	}
	got, err := hex.DecodeString(r.Header.Get(ForwardSignatureHeader))
	if err != nil || len(got) != sha256.Size {
		return "", fmt.Errorf("%w: no or bad %s", ErrForward, ForwardSignatureHeader)
	}
	want, _ := hex.DecodeString(forwardMAC(key, r.Method, r.URL.RequestURI(), node, self, unix))
	if !hmac.Equal(got, want) {
		return "", fmt.Errorf("%w: signature does not match", ErrForward)
	}
	// Checked after the signature, so that a forged request learns nothing
	// about the receiver's clock.
	if off := time.Since(time.Unix(unix, 0)); off > ForwardWindow || off < -ForwardWindow {
		return "", fmt.Errorf("%w: signed %v from this node's clock, past ±%v", ErrForward, off.Round(time.Second), ForwardWindow)
	}
	return node, nil
}

func forwardMAC(key []byte, method, requestURI, from, to string, unix int64) string {
	m := hmac.New(sha256.New, key)
	m.Write(ForwardMessage(method, requestURI, from, to, unix))
	return hex.EncodeToString(m.Sum(nil))
}
