package node

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	stdlog "log"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/minkhq/mink/internal/settings"
)

// certCheckInterval bounds how often the certificate files are looked at
// (their modification time and size) by the handshakes that need them.
const certCheckInterval = 5 * time.Second

// certFiles serves the node's certificate from its PEM files, read again
// when either changes on disk, so a rotated certificate is used by the
// next handshake (within certCheckInterval) without a restart.
type certFiles struct {
	certFile, keyFile string
	interval          time.Duration
	log               *slog.Logger

	mu      sync.Mutex
	checked time.Time
	stamp   [2]fileStamp
	current *tls.Certificate
}

// fileStamp is what tells a rewritten file.
type fileStamp struct {
	mod  time.Time
	size int64
}

// loadCertFiles reads the pair once: an error here is a setting that
// cannot work (the node does not start).
func loadCertFiles(certFile, keyFile string, log *slog.Logger) (*certFiles, error) {
	c := &certFiles{certFile: certFile, keyFile: keyFile, interval: certCheckInterval, log: log}
	stamp, err := c.stamps()
	if err != nil {
		return nil, err
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	c.stamp, c.current, c.checked = stamp, &cert, time.Now()
	return c, nil
}

func (c *certFiles) stamps() ([2]fileStamp, error) {
	var s [2]fileStamp
	for i, f := range []string{c.certFile, c.keyFile} {
		fi, err := os.Stat(f)
		if err != nil {
			return s, err
		}
		s[i] = fileStamp{fi.ModTime(), fi.Size()}
	}
	return s, nil
}

// get is tls.Config.GetCertificate. A pair that cannot be read or does not
// match (a rotation caught between its two files) keeps the previous
// certificate and is tried again at the next check.
func (c *certFiles) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if time.Since(c.checked) < c.interval {
		return c.current, nil
	}
	c.checked = time.Now()
	stamp, err := c.stamps()
	if err != nil {
		c.log.Warn("node: TLS certificate files unreadable; serving the previous certificate", "err", err)
		return c.current, nil
	}
	if stamp == c.stamp {
		return c.current, nil
	}
	cert, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
	if err != nil {
		c.log.Warn("node: TLS certificate files changed but do not load; serving the previous certificate", "err", err)
		return c.current, nil
	}
	c.stamp, c.current = stamp, &cert
	c.log.Info("node: TLS certificate reloaded", "file", c.certFile, "not_after", cert.Leaf.NotAfter)
	return c.current, nil
}

// serverTLS is the listener's TLS configuration: TLS 1.2 or later, the
// certificate from files, HTTP/1.1 as over plain http (HTTP/2's flow
// control windows would pace the large data file bodies a reader streams
// on one connection; readers open several connections instead).
func serverTLS(files *certFiles) *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: files.get, NextProtos: []string{"http/1.1"}}
}

// peerTLS is how a node verifies the others it forwards to over https:
// the system's roots plus the certificates of caFile, when given.
func peerTLS(caFile string) (*tls.Config, error) {
	if caFile == "" {
		return nil, nil
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool() // no system roots on this platform: the file's alone
	}
	b, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	if !pool.AppendCertsFromPEM(b) {
		return nil, errors.New("no PEM certificate in it")
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
}

// checkTLS returns the first TLS setting of c that cannot work.
func (c Config) checkTLS() error {
	switch {
	case c.TLSCert != "" && c.TLSKey == "":
		return settings.Errorf("tls_key", "is required with tls_cert")
	case c.TLSKey != "" && c.TLSCert == "":
		return settings.Errorf("tls_cert", "is required with tls_key")
	case c.TLSCert != "":
		if _, err := tls.LoadX509KeyPair(c.TLSCert, c.TLSKey); err != nil {
			return settings.Errorf("tls_cert", "and tls_key do not load: %v", err)
		}
	}
	if _, err := peerTLS(c.TLSCA); err != nil {
		return settings.Errorf("tls_ca", "%q: %v", c.TLSCA, err)
	}
	return nil
}

// serverLog is the HTTP server's error log, into the node's: a failed TLS
// handshake (a client of plain http, a scanner) at debug, the rest (a
// handler's panic) at warn.
func serverLog(log *slog.Logger) *stdlog.Logger {
	return stdlog.New(serverLogWriter{log}, "", 0)
}

type serverLogWriter struct{ log *slog.Logger }

func (w serverLogWriter) Write(p []byte) (int, error) {
	msg := strings.TrimSpace(string(p))
	if strings.Contains(msg, "TLS handshake error") {
		w.log.Debug("node: http server: " + msg)
	} else {
		w.log.Warn("node: http server: " + msg)
	}
	return len(p), nil
}
