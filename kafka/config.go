package kafka

import (
	"log/slog"
	"net"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/minkhq/mink/internal/settings"
	"github.com/minkhq/mink/internal/tlsfiles"
)

// DefaultRequestTimeout is the default of Config.RequestTimeout.
const DefaultRequestTimeout = 10 * time.Second

// Config says how to reach Kafka. Zero fields take the defaults documented
// on each; a negative number is an error (Validate).
type Config struct {
	// Brokers are seed addresses, HOST:PORT (kafka: --kafka,
	// MINK_KAFKA_BROKERS). Required.
	Brokers []string
	// TLS is kafka_tls: {enabled, ca_file, cert_file, key_file,
	// server_name}. The zero value is plaintext.
	TLS TLS
	// SASL is kafka_sasl: {mechanism, …}. The zero value is no
	// authentication.
	SASL SASL
	// RequestTimeout bounds each metadata or offset request, retries
	// included (franz-go's RetryTimeout). Default DefaultRequestTimeout.
	RequestTimeout time.Duration `setting:"request_timeout"`
	// Logger receives the client's log lines. Nil means slog.Default().
	Logger *slog.Logger
}

// Keys of the TLS and SASL settings, as `mink serve` reads them from its
// YAML file (kafka_tls: {…}, kafka_sasl: {…}); errors of Validate name
// them, and the CLI shows them as flags (kafka_tls.ca_file is
// --kafka-tls-ca).
const (
	KeyTLSEnabled        = "kafka_tls.enabled"
	KeyTLSCAFile         = "kafka_tls.ca_file"
	KeyTLSCertFile       = "kafka_tls.cert_file"
	KeyTLSKeyFile        = "kafka_tls.key_file"
	KeyTLSServerName     = "kafka_tls.server_name"
	KeySASLMechanism     = "kafka_sasl.mechanism"
	KeySASLUsername      = "kafka_sasl.username"
	KeySASLPassword      = "kafka_sasl.password"
	KeySASLTokenFile     = "kafka_sasl.token_file"
	KeySASLOAuthTokenURL = "kafka_sasl.oauth_token_url"
	KeySASLOAuthClientID = "kafka_sasl.oauth_client_id"
	KeySASLOAuthSecret   = "kafka_sasl.oauth_client_secret"
	KeySASLOAuthScopes   = "kafka_sasl.oauth_scopes"
)

// TLS is how the connections to the brokers are encrypted. TLS is on when
// Enabled or any other field is set; the brokers' certificates are always
// verified (there is no setting to skip it).
type TLS struct {
	// Enabled turns TLS on with the system's roots (--kafka-tls).
	Enabled bool
	// CAFile is a PEM file of the CA certificates the brokers'
	// certificates are checked against, instead of the system's
	// (--kafka-tls-ca).
	CAFile string
	// CertFile and KeyFile are the client's certificate and key, PEM, for
	// brokers that require one (mutual TLS: --kafka-tls-cert,
	// --kafka-tls-key). Both or neither.
	CertFile, KeyFile string
	// ServerName is the name every broker's certificate must carry
	// (--kafka-tls-server-name). Empty: the host of the address dialed.
	ServerName string
}

// On reports whether TLS is on: Enabled or any other field set.
func (t TLS) On() bool { return t != TLS{} }

// SASL mechanisms (SASL.Mechanism; the case and - or _ do not matter).
const (
	// MechanismPlain is PLAIN (RFC 4616): Username and Password.
	MechanismPlain = "plain"
	// MechanismSCRAMSHA256 and MechanismSCRAMSHA512 are SCRAM (RFC 5802,
	// 7677): Username and Password.
	MechanismSCRAMSHA256 = "scram-sha-256"
	MechanismSCRAMSHA512 = "scram-sha-512"
	// MechanismOAuthBearer is OAUTHBEARER (RFC 7628, KIP-255): a token
	// from TokenFile, or from the OAuth2 client-credentials flow
	// (OAuthTokenURL, OAuthClientID, OAuthClientSecret, OAuthScopes).
	MechanismOAuthBearer = "oauthbearer"
	// MechanismAWSMSKIAM is AWS_MSK_IAM (Amazon MSK's IAM access
	// control): AWS credentials from the SDK's default chain (the
	// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN
	// variables, AWS_PROFILE and the shared files, web identity, the
	// container or instance role); the region is the broker host's
	// (b-1.….kafka.REGION.amazonaws.com), else AWS_REGION.
	MechanismAWSMSKIAM = "aws-msk-iam"
)

// SASL is how Mink authenticates to the brokers. The zero value is none.
// Secrets (Password, OAuthClientSecret) are never logged; give them by
// their MINK_* variables rather than flags, which other users see in ps.
type SASL struct {
	// Mechanism is one of the Mechanism* constants
	// (--kafka-sasl-mechanism). Empty: no SASL, and every other field
	// must be empty.
	Mechanism string
	// Username and Password, for plain and the scram mechanisms
	// (--kafka-sasl-username, --kafka-sasl-password).
	Username, Password string
	// TokenFile, for oauthbearer, is a file holding the bearer token
	// (--kafka-sasl-token-file); it is read again for every
	// authentication, so that a sidecar may refresh it. It must exist when
	// the node starts.
	TokenFile string
	// OAuthTokenURL, OAuthClientID, OAuthClientSecret and OAuthScopes, for
	// oauthbearer instead of TokenFile, are the OAuth2 client-credentials
	// flow (RFC 6749 §4.4): the token endpoint (https, or http on a
	// loopback address), the client and its secret, and the scopes asked
	// for (optional). A token is fetched again tokenEarlyExpiry before it
	// expires.
	OAuthTokenURL, OAuthClientID, OAuthClientSecret string
	OAuthScopes                                     []string
}

// mechanism returns Mechanism in its canonical spelling.
func (s SASL) mechanism() string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s.Mechanism)), "_", "-")
}

// WithDefaults returns cfg with a zero RequestTimeout or Logger set to its
// default.
func (cfg Config) WithDefaults() Config {
	return settings.Defaults(cfg, Config{RequestTimeout: DefaultRequestTimeout, Logger: slog.Default()})
}

// Validate returns a wrapped *settings.Error when Brokers is empty or has
// an address that is not HOST:PORT, RequestTimeout is negative, a TLS file
// cannot be read (a CA file without a PEM certificate, a certificate
// without its key or a key that does not match it), or the SASL settings
// do not make one mechanism (an unknown mechanism, a setting the mechanism
// does not take, one it needs left empty, a token file that cannot be
// read, a token URL that is not https, aws-msk-iam without TLS). It reads
// the files but does not connect.
func (cfg Config) Validate() error {
	return settings.Check("kafka", settings.Required("kafka", strings.Join(cfg.Brokers, ",")),
		checkBrokers(cfg.Brokers), settings.Negative(cfg), cfg.TLS.check(), cfg.SASL.check(), cfg.checkMSK())
}

// checkMSK: Amazon MSK takes IAM authentication on its TLS listeners only;
// without TLS every connection would fail with a bare EOF.
func (cfg Config) checkMSK() error {
	if cfg.SASL.mechanism() == MechanismAWSMSKIAM && !cfg.TLS.On() {
		return settings.Errorf(KeyTLSEnabled, "is required with %s %s (MSK takes IAM on TLS listeners only)",
			KeySASLMechanism, MechanismAWSMSKIAM)
	}
	return nil
}

// checkBrokers: franz-go would take "host" or "host:x" and then fail every
// dial, so a seed must be HOST:PORT with a port from 1 to 65535.
func checkBrokers(brokers []string) error {
	for _, b := range brokers {
		if err := settings.CheckHostPort(b, false); err != nil {
			return settings.Errorf("kafka", "has %q, not a broker address: %v", b, err)
		}
	}
	return nil
}

func (t TLS) check() error {
	if t.CAFile != "" {
		if _, err := tlsfiles.CAPool(t.CAFile); err != nil {
			return settings.Errorf(KeyTLSCAFile, "%v", err)
		}
	}
	switch {
	case t.CertFile != "" && t.KeyFile == "":
		return settings.Errorf(KeyTLSKeyFile, "is required with %s", KeyTLSCertFile)
	case t.CertFile == "" && t.KeyFile != "":
		return settings.Errorf(KeyTLSCertFile, "is required with %s", KeyTLSKeyFile)
	}
	if _, err := tlsfiles.KeyPair(t.CertFile, t.KeyFile); err != nil {
		return settings.Errorf(KeyTLSCertFile, "and %s: %v", KeyTLSKeyFile, err)
	}
	return nil
}

func (s SASL) check() error {
	// Each setting with the mechanisms that take it: any other must
	// leave it empty, never silently ignore it.
	type setting struct {
		key, value string
		takes      []string
	}
	up := []string{MechanismPlain, MechanismSCRAMSHA256, MechanismSCRAMSHA512}
	oauth := []string{MechanismOAuthBearer}
	all := []setting{{KeySASLUsername, s.Username, up}, {KeySASLPassword, s.Password, up},
		{KeySASLTokenFile, s.TokenFile, oauth}, {KeySASLOAuthTokenURL, s.OAuthTokenURL, oauth},
		{KeySASLOAuthClientID, s.OAuthClientID, oauth}, {KeySASLOAuthSecret, s.OAuthClientSecret, oauth},
		{KeySASLOAuthScopes, strings.Join(s.OAuthScopes, ","), oauth}}
	m := s.mechanism()
	for _, st := range all {
		if st.value == "" {
			continue
		}
		if m == "" {
			return settings.Errorf(st.key, "is set but %s is empty (no SASL)", KeySASLMechanism)
		}
		if !slices.Contains(st.takes, m) && isMechanism(m) {
			return settings.Errorf(st.key, "is set but %s %s does not take it", KeySASLMechanism, m)
		}
	}
	switch m {
	case "", MechanismAWSMSKIAM:
		return nil
	case MechanismPlain, MechanismSCRAMSHA256, MechanismSCRAMSHA512:
		if s.Username == "" {
			return settings.Errorf(KeySASLUsername, "is required with %s %s", KeySASLMechanism, m)
		}
		if s.Password == "" {
			return settings.Errorf(KeySASLPassword, "is required with %s %s", KeySASLMechanism, m)
		}
		return nil
	case MechanismOAuthBearer:
		return s.checkOAuth()
	default:
		return settings.Errorf(KeySASLMechanism, "%q is not one of %s, %s, %s, %s, %s", s.Mechanism,
			MechanismPlain, MechanismSCRAMSHA256, MechanismSCRAMSHA512, MechanismOAuthBearer, MechanismAWSMSKIAM)
	}
}

func isMechanism(m string) bool {
	switch m {
	case MechanismPlain, MechanismSCRAMSHA256, MechanismSCRAMSHA512, MechanismOAuthBearer, MechanismAWSMSKIAM:
		return true
	}
	return false
}

func (s SASL) checkOAuth() error {
	switch {
	case s.TokenFile != "" && s.OAuthTokenURL != "":
		return settings.Errorf(KeySASLTokenFile, "and %s are both set: give one source of tokens", KeySASLOAuthTokenURL)
	case s.TokenFile != "":
		fi, err := os.Stat(s.TokenFile)
		if err == nil && fi.IsDir() {
			return settings.Errorf(KeySASLTokenFile, "%s is a directory", s.TokenFile)
		}
		if err != nil {
			return settings.Errorf(KeySASLTokenFile, "%v", err)
		}
		return nil
	case s.OAuthTokenURL == "":
		return settings.Errorf(KeySASLTokenFile, "or %s is required with %s %s", KeySASLOAuthTokenURL,
			KeySASLMechanism, MechanismOAuthBearer)
	}
	u, err := url.Parse(s.OAuthTokenURL)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return settings.Errorf(KeySASLOAuthTokenURL, "is not an http(s) URL")
	}
	if u.Scheme == "http" && !loopback(u.Hostname()) {
		// The client secret would cross the network in clear.
		return settings.Errorf(KeySASLOAuthTokenURL, "%q must be https (http only on a loopback address)", u.Redacted())
	}
	if s.OAuthClientID == "" {
		return settings.Errorf(KeySASLOAuthClientID, "is required with %s", KeySASLOAuthTokenURL)
	}
	if s.OAuthClientSecret == "" {
		return settings.Errorf(KeySASLOAuthSecret, "is required with %s", KeySASLOAuthTokenURL)
	}
	return nil
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
