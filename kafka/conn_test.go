package kafka_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/internal/settings"
	"github.com/minkhq/mink/internal/testca"
	"github.com/minkhq/mink/kafka"
	"github.com/minkhq/mink/outage"
)

// secured starts a kfake cluster with SASL users of each mechanism kfake
// has (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512) and topic "t", with opts
// (kfake.TLS).
func secured(t *testing.T, opts ...kfake.Opt) *kfake.Cluster {
	t.Helper()
	kf, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1), kfake.SeedTopics(1, "t"), kfake.EnableSASL(),
		kfake.Superuser("PLAIN", "plain-user", "plain-pass"),
		kfake.Superuser("SCRAM-SHA-256", "scram256-user", "scram256-pass"),
		kfake.Superuser("SCRAM-SHA-512", "scram512-user", "scram512-pass")}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(kf.Close)
	return kf
}

// roundTrip produces a record to "t" with a client of cfg's options, then
// reads it back with Mink's client (ListOffsets, and ReadRange on the
// reading path): every client Mink makes reaches the cluster.
func roundTrip(t *testing.T, cfg kafka.Config, value string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cfg.RequestTimeout = 3 * time.Second
	kc, err := kafka.New(cfg)
	require.NoError(t, err)
	defer kc.Close()
	if _, err := kc.Partitions(ctx, "t"); err != nil {
		return err
	}
	opts, err := cfg.ClientOpts()
	require.NoError(t, err)
	prod, err := kgo.NewClient(append(opts, kgo.DefaultProduceTopic("t"))...)
	require.NoError(t, err)
	defer prod.Close()
	require.NoError(t, prod.ProduceSync(ctx, &kgo.Record{Value: []byte(value)}).FirstErr())
	offs, err := kc.ListOffsets(ctx, "t")
	require.NoError(t, err)
	end := offs[0].HighWatermark
	r, err := kc.NewReader("t", 0, end-1)
	require.NoError(t, err)
	defer r.Close()
	recs, err := r.Poll(ctx)
	require.NoError(t, err)
	require.NotEmpty(t, recs)
	require.Equal(t, value, string(recs[0].Value))
	require.Equal(t, end-1, recs[0].Offset)
	return nil
}

// Each SASL mechanism kfake has works with the right credentials and
// fails with wrong ones; no SASL at all fails too. (kfake closes the
// connection on a failed authentication, so the error is an EOF; Kafka
// answers SASL_AUTHENTICATION_FAILED, which the error then carries.)
func TestSASL(t *testing.T) {
	kf := secured(t)
	for _, tc := range []struct{ mechanism, user, pass string }{
		{"plain", "plain-user", "plain-pass"},
		{"scram-sha-256", "scram256-user", "scram256-pass"},
		{"SCRAM_SHA_512", "scram512-user", "scram512-pass"}, // case and _ do not matter
	} {
		t.Run(tc.mechanism, func(t *testing.T) {
			cfg := kafka.Config{Brokers: kf.ListenAddrs(),
				SASL: kafka.SASL{Mechanism: tc.mechanism, Username: tc.user, Password: tc.pass}}
			require.NoError(t, roundTrip(t, cfg, "hello "+tc.mechanism))

			cfg.SASL.Password = "wrong"
			err := roundTrip(t, cfg, "never")
			require.ErrorIs(t, err, outage.ErrUnavailable)
			require.ErrorContains(t, err, "EOF")
		})
	}
	err := roundTrip(t, kafka.Config{Brokers: kf.ListenAddrs()}, "never")
	require.Error(t, err, "a client without SASL is refused")
}

// TLS with a client certificate (the listener requires one) and SCRAM:
// the CA of the test's certificates verifies the broker; without it, with
// another CA, with a server name the certificate lacks, or without a
// client certificate, the connection fails with the reason.
func TestTLS(t *testing.T) {
	certs := testca.NewSet(t)
	kf := secured(t, kfake.TLS(certs.ServerTLS(t, true)))
	scram := kafka.SASL{Mechanism: "scram-sha-256", Username: "scram256-user", Password: "scram256-pass"}
	good := kafka.TLS{CAFile: certs.CAFile, CertFile: certs.ClientCert, KeyFile: certs.ClientKey}
	require.NoError(t, roundTrip(t, kafka.Config{Brokers: kf.ListenAddrs(), TLS: good, SASL: scram}, "over tls"))
	named := good
	named.ServerName = "localhost" // in the certificate, though not the address dialed
	require.NoError(t, roundTrip(t, kafka.Config{Brokers: kf.ListenAddrs(), TLS: named, SASL: scram}, "by name"))

	other := testca.NewSet(t)
	for _, tc := range []struct {
		name string
		tls  kafka.TLS
		want string
	}{
		{"system roots", kafka.TLS{Enabled: true, CertFile: certs.ClientCert, KeyFile: certs.ClientKey}, "certificate signed by unknown authority"},
		{"another CA", kafka.TLS{CAFile: other.CAFile, CertFile: certs.ClientCert, KeyFile: certs.ClientKey}, "certificate signed by unknown authority"},
		{"wrong server name", kafka.TLS{CAFile: certs.CAFile, CertFile: certs.ClientCert, KeyFile: certs.ClientKey,
			ServerName: "kafka.example.com"}, "not kafka.example.com"},
		{"no client certificate", kafka.TLS{CAFile: certs.CAFile}, "certificate required"},
		// Go's client sends only a certificate of a CA the server names.
		{"a client certificate of another CA", kafka.TLS{CAFile: certs.CAFile, CertFile: other.ClientCert, KeyFile: other.ClientKey},
			"certificate required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := roundTrip(t, kafka.Config{Brokers: kf.ListenAddrs(), TLS: tc.tls, SASL: scram}, "never")
			require.ErrorIs(t, err, outage.ErrUnavailable)
			require.ErrorContains(t, err, tc.want)
		})
	}
	// Plaintext to a TLS listener fails (kfake drops the connection).
	require.Error(t, roundTrip(t, kafka.Config{Brokers: kf.ListenAddrs(), SASL: scram}, "never"))
}

// Validate names the setting that cannot work.
func TestValidateConnection(t *testing.T) {
	certs := testca.NewSet(t)
	token := t.TempDir() + "/token"
	b := []string{"k:9092"}
	for _, tc := range []struct {
		cfg       kafka.Config
		key, want string
	}{
		{kafka.Config{Brokers: b, TLS: kafka.TLS{CAFile: certs.ClientKey}}, kafka.KeyTLSCAFile, "holds no PEM certificate"},
		{kafka.Config{Brokers: b, TLS: kafka.TLS{CAFile: "/nonexistent/ca.pem"}}, kafka.KeyTLSCAFile, "no such file"},
		{kafka.Config{Brokers: b, TLS: kafka.TLS{CertFile: certs.ClientCert}}, kafka.KeyTLSKeyFile, "is required with kafka_tls.cert_file"},
		{kafka.Config{Brokers: b, TLS: kafka.TLS{KeyFile: certs.ClientKey}}, kafka.KeyTLSCertFile, "is required with kafka_tls.key_file"},
		{kafka.Config{Brokers: b, TLS: kafka.TLS{CertFile: certs.ClientCert, KeyFile: certs.ServerKey}}, kafka.KeyTLSCertFile,
			"private key does not match public key"},
		{kafka.Config{Brokers: b, SASL: kafka.SASL{Mechanism: "gssapi"}}, kafka.KeySASLMechanism, `"gssapi" is not one of plain`},
		{kafka.Config{Brokers: b, SASL: kafka.SASL{Username: "u", Password: "p"}}, kafka.KeySASLUsername, "is set but kafka_sasl.mechanism is empty"},
		{kafka.Config{Brokers: b, SASL: kafka.SASL{Mechanism: "plain", Username: "u"}}, kafka.KeySASLPassword, "is required with kafka_sasl.mechanism plain"},
		{kafka.Config{Brokers: b, SASL: kafka.SASL{Mechanism: "scram-sha-512", Password: "p"}}, kafka.KeySASLUsername, "is required"},
		{kafka.Config{Brokers: b, SASL: kafka.SASL{Mechanism: "scram-sha-256", Username: "u", Password: "p", TokenFile: token}},
			kafka.KeySASLTokenFile, "is set but kafka_sasl.mechanism scram-sha-256 does not take it"},
		{kafka.Config{Brokers: b, SASL: kafka.SASL{Mechanism: "oauthbearer"}}, kafka.KeySASLTokenFile, "or kafka_sasl.oauth_token_url is required"},
		{kafka.Config{Brokers: b, SASL: kafka.SASL{Mechanism: "oauthbearer", TokenFile: token}}, kafka.KeySASLTokenFile, "no such file"},
		{kafka.Config{Brokers: b, SASL: kafka.SASL{Mechanism: "oauthbearer", TokenFile: t.TempDir()}}, kafka.KeySASLTokenFile, "is a directory"},
		{kafka.Config{Brokers: b, SASL: kafka.SASL{Mechanism: "oauthbearer", OAuthTokenURL: "http://idp.example.com/token",
			OAuthClientID: "c", OAuthClientSecret: "s"}}, kafka.KeySASLOAuthTokenURL, "must be https"},
		{kafka.Config{Brokers: b, SASL: kafka.SASL{Mechanism: "oauthbearer", OAuthTokenURL: "https://idp.example.com/token",
			OAuthClientSecret: "s"}}, kafka.KeySASLOAuthClientID, "is required"},
		{kafka.Config{Brokers: b, SASL: kafka.SASL{Mechanism: "oauthbearer", OAuthTokenURL: "https://idp.example.com/token",
			OAuthClientID: "c"}}, kafka.KeySASLOAuthSecret, "is required"},
		{kafka.Config{Brokers: b, SASL: kafka.SASL{Mechanism: "aws-msk-iam", Username: "u"}}, kafka.KeySASLUsername,
			"kafka_sasl.mechanism aws-msk-iam does not take it"},
		{kafka.Config{Brokers: b, SASL: kafka.SASL{Mechanism: "aws-msk-iam"}}, kafka.KeyTLSEnabled,
			"is required with kafka_sasl.mechanism aws-msk-iam"},
	} {
		err := tc.cfg.Validate()
		var se *settings.Error
		require.True(t, errors.As(err, &se), "%+v: %v", tc.cfg, err)
		require.Equal(t, tc.key, se.Key, "%v", err)
		require.ErrorContains(t, err, tc.want)
		_, err = kafka.New(tc.cfg)
		require.Error(t, err, "New validates too")
	}
	for _, ok := range []kafka.Config{
		{Brokers: b, TLS: kafka.TLS{Enabled: true}},
		{Brokers: b, TLS: kafka.TLS{CAFile: certs.CAFile, CertFile: certs.ClientCert, KeyFile: certs.ClientKey, ServerName: "k"}},
		{Brokers: b, SASL: kafka.SASL{Mechanism: "PLAIN", Username: "u", Password: "p"}},
		{Brokers: b, SASL: kafka.SASL{Mechanism: "oauthbearer", OAuthTokenURL: "http://127.0.0.1:1/token", OAuthClientID: "c",
			OAuthClientSecret: "s", OAuthScopes: []string{"kafka"}}},
		{Brokers: b, TLS: kafka.TLS{Enabled: true}, SASL: kafka.SASL{Mechanism: "aws-msk-iam"}},
	} {
		require.NoError(t, ok.Validate(), "%+v", ok)
	}
}
