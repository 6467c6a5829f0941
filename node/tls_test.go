package node

import (
	"crypto/tls"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/internal/testca"
)

// The listener serves the certificate files as they are on disk: a new
// connection after a rotation sees the new certificate, a pair caught
// half rotated keeps the previous one, and TLS below 1.2 is refused.
func TestCertificateRotation(t *testing.T) {
	ca := testca.New(t)
	certFile, keyFile := ca.Issue(t, "node", "one", "127.0.0.1")
	files, err := loadCertFiles(certFile, keyFile, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	files.interval = 0
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }),
		ReadHeaderTimeout: 5 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	go srv.Serve(tls.NewListener(raw, serverTLS(files)))
	defer srv.Close()
	addr := raw.Addr().String()

	served := func() string {
		t.Helper()
		conn, err := tls.Dial("tcp", addr, ca.ClientTLS())
		require.NoError(t, err)
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].Subject.CommonName
	}
	require.Equal(t, "one", served())
	// And over HTTP(S): the CA verifies it for 127.0.0.1.
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: ca.ClientTLS()}}
	resp, err := client.Get("https://" + addr + "/")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, "ok", string(body))
	require.Equal(t, "HTTP/1.1", resp.Proto)

	ca.Issue(t, "node", "two", "127.0.0.1")
	require.Equal(t, "two", served())

	// A rotation caught between its files (the new certificate, the old
	// key) keeps the previous pair until both are there.
	otherCert, otherKey := ca.Issue(t, "other", "three", "127.0.0.1")
	copyFile(t, otherCert, certFile)
	require.Equal(t, "two", served())
	copyFile(t, otherKey, keyFile)
	require.Equal(t, "three", served())

	// Between checks the files are not looked at.
	files.interval = time.Hour
	ca.Issue(t, "node", "four", "127.0.0.1")
	require.Equal(t, "three", served())

	old := ca.ClientTLS()
	old.MinVersion, old.MaxVersion = tls.VersionTLS10, tls.VersionTLS11
	_, err = tls.Dial("tcp", addr, old)
	require.ErrorContains(t, err, "protocol version", "TLS 1.1 is refused")
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(to+".tmp", b, 0o600))
	require.NoError(t, os.Rename(to+".tmp", to))
}

// A certificate without its key, or the reverse, is an error naming the
// missing setting; a CA file without a certificate names tls_ca.
func TestValidateTLS(t *testing.T) {
	ca := testca.New(t)
	certFile, keyFile := ca.Issue(t, "node", "n", "127.0.0.1")
	c := valid()
	c.TLSCert, c.TLSKey, c.TLSCA = certFile, keyFile, ca.File
	require.NoError(t, c.Validate())
	for _, tc := range []struct {
		mod  func(*Config)
		want string
	}{
		{func(c *Config) { c.TLSKey = "" }, "tls_key is required with tls_cert"},
		{func(c *Config) { c.TLSCert = "" }, "tls_cert is required with tls_key"},
		{func(c *Config) { c.TLSKey = ca.File }, "tls_cert and tls_key do not load"},
		{func(c *Config) { c.TLSCA = keyFile }, "no PEM certificate in it"},
	} {
		c := valid()
		c.TLSCert, c.TLSKey, c.TLSCA = certFile, keyFile, ca.File
		tc.mod(&c)
		require.ErrorContains(t, c.Validate(), tc.want)
	}
}
