// Package tlsfiles reads the PEM files of a TLS client's settings (the CA
// certificates a server is checked against, the client's own certificate
// and key) into a crypto/tls config: one reader for the Kafka and Schema
// Registry clients.
package tlsfiles

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
)

// CAPool reads a PEM file of CA certificates into a pool. Errors: the file
// cannot be read, or it holds no certificate Go can parse (the message
// starts with the path).
func CAPool(path string) (*x509.CertPool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		if block, _ := pem.Decode(b); block == nil {
			return nil, fmt.Errorf("%s holds no PEM block", path)
		}
		return nil, fmt.Errorf("%s holds no PEM certificate (a CERTIFICATE block Go can parse)", path)
	}
	return pool, nil
}

// KeyPair reads a client certificate (PEM, the leaf first, then any
// intermediates) and its private key (PEM). Both paths or neither: with
// neither it returns nil. Errors: one path without the other, a file that
// cannot be read, or a key that does not match the certificate.
func KeyPair(certFile, keyFile string) (*tls.Certificate, error) {
	switch {
	case certFile == "" && keyFile == "":
		return nil, nil
	case keyFile == "":
		return nil, errors.New("a client certificate needs its key file")
	case certFile == "":
		return nil, errors.New("a client key needs its certificate file")
	}
	c, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// Client returns the TLS config of a client: the server's certificate is
// checked against caFile's certificates (empty: the system's roots) and
// serverName (empty: the host dialed), and the client presents the
// certificate of certFile and keyFile when both are given. TLS 1.2 at
// least. Errors: those of CAPool and KeyPair.
func Client(caFile, certFile, keyFile, serverName string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: serverName}
	if caFile != "" {
		pool, err := CAPool(caFile)
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = pool
	}
	pair, err := KeyPair(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	if pair != nil {
		cfg.Certificates = []tls.Certificate{*pair}
	}
	return cfg, nil
}
