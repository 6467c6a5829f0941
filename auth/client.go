package auth

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// TokenSource gets bearer tokens from a node's POST /v1/oauth/tokens with
// a credential "CLIENT_ID:SECRET" (the client-credentials grant), and
// keeps each until a minute before it expires. The `mink` CLI and `mink
// dev` use it; engines use their own OAuth2 clients.
type TokenSource struct {
	// URL is the node's base URL, e.g. "http://127.0.0.1:8181".
	URL string
	// Credential is "CLIENT_ID:SECRET" (`mink principal create` prints it).
	Credential string
	// Client sends the requests; nil means http.DefaultClient.
	Client *http.Client

	mu      sync.Mutex
	token   string
	renewAt time.Time
}

// Token returns a bearer token, fetching a new one when it has none left
// valid for a minute. Errors: a malformed credential, the node's OAuth
// error (e.g. "invalid_client: …"), or the transport's.
func (s *TokenSource) Token(ctx context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.token != "" && time.Now().Before(s.renewAt) {
		return s.token, nil
	}
	id, secret, ok := BasicCredential(s.Credential)
	if !ok {
		return "", fmt.Errorf("auth: credential must be CLIENT_ID:SECRET")
	}
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {id}, "client_secret": {secret}, "scope": {"catalog"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(s.URL, "/")+"/v1/oauth/tokens",
		strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	c := s.Client
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		var e oauthError
		if json.Unmarshal(b, &e) != nil || e.Error == "" {
			return "", fmt.Errorf("auth: token: %s: %s", resp.Status, strings.TrimSpace(string(b)))
		}
		return "", fmt.Errorf("auth: token: %s: %s", e.Error, e.Description)
	}
	var tr tokenResponse
	if err := json.Unmarshal(b, &tr); err != nil || tr.AccessToken == "" {
		return "", fmt.Errorf("auth: token: answer %q is not a token", b)
	}
	s.token = tr.AccessToken
	s.renewAt = time.Now().Add(time.Duration(tr.ExpiresIn)*time.Second - time.Minute)
	return s.token, nil
}
