package kafka

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// kfake has no OAUTHBEARER nor AWS_MSK_IAM: these tests run the
// mechanisms' first step (what the client sends the broker) and check the
// token or signature in it.

// initial returns the client's first SASL message of m's mechanism.
func initial(t *testing.T, s SASL, host string) (string, error) {
	t.Helper()
	require.NoError(t, Config{Brokers: []string{host}, TLS: TLS{Enabled: true}, SASL: s}.Validate())
	m, err := s.newMechanism()
	require.NoError(t, err)
	_, msg, err := m.Authenticate(context.Background(), host)
	return string(msg), err
}

// The token file is read at every authentication: a sidecar's new token
// is used by the next connection.
func TestOAuthBearerTokenFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(file, []byte("token-one\n"), 0o600))
	s := SASL{Mechanism: MechanismOAuthBearer, TokenFile: file}
	msg, err := initial(t, s, "k:9092")
	require.NoError(t, err)
	require.Equal(t, "n,,\x01auth=Bearer token-one\x01\x01", msg)

	require.NoError(t, os.WriteFile(file, []byte("token-two"), 0o600))
	m, err := s.newMechanism()
	require.NoError(t, err)
	_, got, err := m.Authenticate(context.Background(), "k:9092")
	require.NoError(t, err)
	require.Equal(t, "n,,\x01auth=Bearer token-two\x01\x01", string(got))

	require.NoError(t, os.WriteFile(file, []byte(" \n"), 0o600))
	_, _, err = m.Authenticate(context.Background(), "k:9092")
	require.ErrorContains(t, err, "kafka_sasl.token_file "+file+" is empty")
	require.NoError(t, os.Remove(file))
	_, _, err = m.Authenticate(context.Background(), "k:9092")
	require.ErrorContains(t, err, "no such file")
}

// tokenServer is an OAuth2 token endpoint (RFC 6749 §4.4) for client
// "mink" with secret "s3cret": each token it issues is "token-N", valid
// for lifetime.
func tokenServer(t *testing.T, lifetime time.Duration) (url string, issued *atomic.Int32) {
	issued = new(atomic.Int32)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.NoError(t, r.ParseForm())
		id, secret, ok := r.BasicAuth()
		if !ok {
			id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
		}
		if r.PostForm.Get("grant_type") != "client_credentials" || id != "mink" || secret != "s3cret" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error":"invalid_client"}`)
			return
		}
		require.Equal(t, "kafka.read kafka.describe", r.PostForm.Get("scope"))
		n := issued.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": fmt.Sprintf("token-%d", n),
			"token_type": "Bearer", "expires_in": int(lifetime.Seconds())})
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/token", issued
}

// The client-credentials flow: one token for every connection while it
// is fresh, a new one once it is within tokenEarlyExpiry of its expiry;
// a wrong secret is the endpoint's error.
func TestOAuthBearerClientCredentials(t *testing.T) {
	url, issued := tokenServer(t, time.Hour)
	s := SASL{Mechanism: MechanismOAuthBearer, OAuthTokenURL: url, OAuthClientID: "mink", OAuthClientSecret: "s3cret",
		OAuthScopes: []string{"kafka.read", "kafka.describe"}}
	m, err := s.newMechanism()
	require.NoError(t, err)
	for range 3 {
		_, msg, err := m.Authenticate(context.Background(), "k:9092")
		require.NoError(t, err)
		require.Equal(t, "n,,\x01auth=Bearer token-1\x01\x01", string(msg))
	}
	require.EqualValues(t, 1, issued.Load(), "a fresh token is reused")

	short, issuedShort := tokenServer(t, tokenEarlyExpiry/2)
	s.OAuthTokenURL = short
	m, err = s.newMechanism()
	require.NoError(t, err)
	for i := 1; i <= 2; i++ {
		_, msg, err := m.Authenticate(context.Background(), "k:9092")
		require.NoError(t, err)
		require.Equal(t, fmt.Sprintf("n,,\x01auth=Bearer token-%d\x01\x01", i), string(msg))
	}
	require.EqualValues(t, 2, issuedShort.Load(), "a token about to expire is replaced")

	s.OAuthClientSecret = "wrong"
	_, err = initial(t, s, "k:9092")
	require.ErrorContains(t, err, "kafka_sasl.oauth_token_url")
	require.ErrorContains(t, err, "invalid_client")
	require.NotContains(t, err.Error(), "wrong", "the secret is not in the message")
}

// AWS_MSK_IAM signs with the credentials of the SDK's chain (here the
// standard variables) for the broker's region.
func TestAWSMSKIAM(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDMINKTEST")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_SESSION_TOKEN", "session-token")
	t.Setenv("AWS_REGION", "")
	msg, err := initial(t, SASL{Mechanism: "AWS_MSK_IAM"}, "b-1.demo.abc123.c2.kafka.eu-west-1.amazonaws.com:9098")
	require.NoError(t, err)
	var fields map[string]string
	require.NoError(t, json.Unmarshal([]byte(msg), &fields))
	date := time.Now().UTC().Format("20060102")
	require.Equal(t, "AKIDMINKTEST/"+date+"/eu-west-1/kafka-cluster/aws4_request", fields["x-amz-credential"])
	require.Equal(t, "session-token", fields["x-amz-security-token"])
	require.Equal(t, "kafka-cluster:Connect", fields["action"])
	require.Len(t, fields["x-amz-signature"], 64)

	// Another host: the region is AWS_REGION's.
	t.Setenv("AWS_REGION", "us-east-2")
	msg, err = initial(t, SASL{Mechanism: MechanismAWSMSKIAM}, "kafka.internal:9098")
	require.NoError(t, err)
	require.True(t, strings.Contains(msg, "/us-east-2/kafka-cluster/"), msg)

	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	_, err = initial(t, SASL{Mechanism: MechanismAWSMSKIAM}, "kafka.internal:9098")
	require.ErrorContains(t, err, "aws credentials")
}
