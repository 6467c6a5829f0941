// Package testcerts makes the certificates of a test's TLS servers and
// clients: a CA, a server certificate for 127.0.0.1 and localhost, and a
// client certificate, each written as PEM files.
package testcerts

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Set is one CA and the certificates it signed, as files in a test's
// temporary directory.
type Set struct {
	// CAFile holds the CA certificate (PEM).
	CAFile string
	// ServerCert and ServerKey: a server certificate for 127.0.0.1, ::1
	// and localhost, and its key (PKCS #8 PEM).
	ServerCert, ServerKey string
	// ClientCert and ClientKey: a client certificate whose common name is
	// ClientName, and its key.
	ClientCert, ClientKey string
	// Pool holds the CA certificate.
	Pool *x509.CertPool
}

// ClientName is the common name of a Set's client certificate (the
// PostgreSQL user clientcert=verify-full checks it against).
const ClientName = "mink"

// New makes a CA named name and its certificates under t.TempDir().
func New(t testing.TB, name string) *Set {
	t.Helper()
	dir := t.TempDir()
	caKey := newKey(t)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name + " CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatalf("testcerts: %v", err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	s := &Set{CAFile: filepath.Join(dir, "ca.pem"), Pool: x509.NewCertPool()}
	s.Pool.AddCert(ca)
	write(t, s.CAFile, "CERTIFICATE", caDER)
	leaf := func(serial int64, cn string, usage x509.ExtKeyUsage, hosts bool) (certFile, keyFile string) {
		key := newKey(t)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}}
		if hosts {
			tmpl.DNSNames = []string{"localhost"}
			tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatalf("testcerts: %v", err)
		}
		keyDER, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			t.Fatalf("testcerts: %v", err)
		}
		certFile, keyFile = filepath.Join(dir, cn+".pem"), filepath.Join(dir, cn+"-key.pem")
		write(t, certFile, "CERTIFICATE", der)
		write(t, keyFile, "PRIVATE KEY", keyDER)
		return certFile, keyFile
	}
	s.ServerCert, s.ServerKey = leaf(2, "server", x509.ExtKeyUsageServerAuth, true)
	s.ClientCert, s.ClientKey = leaf(3, ClientName, x509.ExtKeyUsageClientAuth, false)
	return s
}

// ServerTLS is the TLS config of a server with the Set's server
// certificate; with clientAuth, it requires a client certificate the CA
// signed.
func (s *Set) ServerTLS(t testing.TB, clientAuth bool) *tls.Config {
	t.Helper()
	pair, err := tls.LoadX509KeyPair(s.ServerCert, s.ServerKey)
	if err != nil {
		t.Fatalf("testcerts: %v", err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	if clientAuth {
		cfg.ClientAuth, cfg.ClientCAs = tls.RequireAndVerifyClientCert, s.Pool
	}
	return cfg
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("testcerts: %v", err)
	}
	return key
}

func write(t testing.TB, path, typ string, der []byte) {
	mode := os.FileMode(0o644)
	if typ == "PRIVATE KEY" {
		mode = 0o600
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), mode); err != nil {
		t.Fatalf("testcerts: %v", err)
	}
}
