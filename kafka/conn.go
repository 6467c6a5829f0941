package kafka

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/aws"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/minkhq/mink/internal/tlsfiles"
)

// tokenEarlyExpiry is how long before its expiry an OAuth2 token is
// replaced: a connection authenticated with it must not see it expire
// during the handshake.
const tokenEarlyExpiry = 30 * time.Second

// tokenRequestTimeout bounds one request to the OAuth2 token endpoint.
const tokenRequestTimeout = 10 * time.Second

// ClientOpts returns the franz-go options that reach cfg's brokers: the
// seeds, TLS and SASL (franz-go's sasl/plain, scram, oauth and aws
// packages). Every Kafka client Mink makes starts from them; each client
// adds its own (timeouts, partitioner). The options share one SASL
// mechanism, so clients made from them share its OAuth2 token. Errors:
// cfg.Validate's, and an AWS configuration the SDK cannot load.
func (cfg Config) ClientOpts() ([]kgo.Opt, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	opts := []kgo.Opt{kgo.SeedBrokers(cfg.Brokers...)}
	if cfg.TLS.On() {
		tc, err := tlsfiles.Client(cfg.TLS.CAFile, cfg.TLS.CertFile, cfg.TLS.KeyFile, cfg.TLS.ServerName)
		if err != nil {
			return nil, fmt.Errorf("kafka: tls: %w", err)
		}
		opts = append(opts, kgo.DialTLSConfig(tc))
	}
	m, err := cfg.SASL.newMechanism()
	if err != nil {
		return nil, fmt.Errorf("kafka: sasl: %w", err)
	}
	if m != nil {
		opts = append(opts, kgo.SASL(m))
	}
	return opts, nil
}

// newMechanism returns the SASL mechanism of s (validated), or nil for
// none.
func (s SASL) newMechanism() (sasl.Mechanism, error) {
	switch s.mechanism() {
	case MechanismPlain:
		return plain.Auth{User: s.Username, Pass: s.Password}.AsMechanism(), nil
	case MechanismSCRAMSHA256:
		return scram.Auth{User: s.Username, Pass: s.Password}.AsSha256Mechanism(), nil
	case MechanismSCRAMSHA512:
		return scram.Auth{User: s.Username, Pass: s.Password}.AsSha512Mechanism(), nil
	case MechanismOAuthBearer:
		if s.TokenFile != "" {
			return oauth.Oauth(func(context.Context) (oauth.Auth, error) {
				tok, err := readToken(s.TokenFile)
				return oauth.Auth{Token: tok}, err
			}), nil
		}
		cc := clientcredentials.Config{ClientID: s.OAuthClientID, ClientSecret: s.OAuthClientSecret,
			TokenURL: s.OAuthTokenURL, Scopes: s.OAuthScopes}
		ctx := context.WithValue(context.Background(), oauth2.HTTPClient, &http.Client{Timeout: tokenRequestTimeout})
		src := oauth2.ReuseTokenSourceWithExpiry(nil, cc.TokenSource(ctx), tokenEarlyExpiry)
		return oauth.Oauth(func(context.Context) (oauth.Auth, error) {
			tok, err := src.Token()
			if err != nil {
				return oauth.Auth{}, fmt.Errorf("%s: %w", KeySASLOAuthTokenURL, err)
			}
			return oauth.Auth{Token: tok.AccessToken}, nil
		}), nil
	case MechanismAWSMSKIAM:
		// The SDK's default chain, read once; its credentials cache
		// refreshes temporary credentials before they expire.
		ac, err := awsconfig.LoadDefaultConfig(context.Background())
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", KeySASLMechanism, MechanismAWSMSKIAM, err)
		}
		return aws.ManagedStreamingIAM(func(ctx context.Context) (aws.Auth, error) {
			c, err := ac.Credentials.Retrieve(ctx)
			if err != nil {
				return aws.Auth{}, fmt.Errorf("aws credentials: %w", err)
			}
			return aws.Auth{AccessKey: c.AccessKeyID, SecretKey: c.SecretAccessKey, SessionToken: c.SessionToken}, nil
		}), nil
	}
	return nil, nil
}

// readToken reads a bearer token file, without surrounding white space.
func readToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", KeySASLTokenFile, err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", errors.New(KeySASLTokenFile + " " + path + " is empty")
	}
	return tok, nil
}
