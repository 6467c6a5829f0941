// Package testca makes throwaway certificate authorities and the server and client
// certificates of tests of TLS (PEM files in a test's temporary
// directory). It is imported only by tests.
package testca

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

// CA is a throwaway certificate authority for tests of TLS listeners.
type CA struct {
	// File is the PEM file of the CA's certificate (a --tls-ca).
	File string
	// Pool holds the CA's certificate: a client's RootCAs.
	Pool *x509.CertPool
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	dir  string
}

// New makes a CA (ECDSA P-256, valid for a day) in a temporary
// directory of t.
func New(t testing.TB) *CA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	// A name of its own: a TLS server names the CAs it takes by subject,
	// and two test CAs must not pass for each other.
	sn := serial(t)
	tmpl := &x509.Certificate{
		SerialNumber: sn, Subject: pkix.Name{CommonName: "mink test CA " + sn.Text(16)},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	ca := &CA{Pool: x509.NewCertPool(), cert: cert, key: key, dir: t.TempDir()}
	ca.Pool.AddCert(cert)
	ca.File = filepath.Join(ca.dir, "ca.pem")
	writePEM(t, ca.File, "CERTIFICATE", der)
	return ca
}

// Issue writes a server certificate signed by ca for hosts (IP addresses
// or DNS names) with common name cn, and its key, to PEM files
// <name>.pem and <name>.key in ca's directory (an existing pair is
// replaced), and returns their paths.
func (ca *CA) Issue(t testing.TB, name, cn string, hosts ...string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(t), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(ca.dir, name+".pem"), filepath.Join(ca.dir, name+".key")
	// Written aside and renamed, as a rotation should be: a reader never
	// sees half a file.
	writePEM(t, certFile, "CERTIFICATE", der)
	writePEM(t, keyFile, "EC PRIVATE KEY", kder)
	return certFile, keyFile
}

// ClientTLS returns a client configuration trusting only ca.
func (ca *CA) ClientTLS() *tls.Config {
	return &tls.Config{RootCAs: ca.Pool, MinVersion: tls.VersionTLS12}
}

func serial(t testing.TB) *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func writePEM(t testing.TB, path, typ string, der []byte) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// ClientName is the common name of a Set's client certificate (the
// PostgreSQL user clientcert=verify-full checks it against).
const ClientName = "mink"

// Set is one CA with a server certificate for 127.0.0.1, ::1 and
// localhost and a client certificate whose common name is ClientName, as
// PEM files: what a test's TLS server (Kafka, PostgreSQL, a registry) and
// its client need.
type Set struct {
	*CA
	// CAFile holds the CA certificate (CA.File).
	CAFile                string
	ServerCert, ServerKey string
	ClientCert, ClientKey string
}

// NewSet makes a CA and its server and client certificates.
func NewSet(t testing.TB) *Set {
	t.Helper()
	s := &Set{CA: New(t)}
	s.CAFile = s.File
	s.ServerCert, s.ServerKey = s.Issue(t, "server", "server", "127.0.0.1", "::1", "localhost")
	s.ClientCert, s.ClientKey = s.Issue(t, ClientName, ClientName)
	return s
}

// ServerTLS is the TLS config of a server with s's server certificate;
// with clientAuth it requires a client certificate s's CA signed.
func (s *Set) ServerTLS(t testing.TB, clientAuth bool) *tls.Config {
	t.Helper()
	pair, err := tls.LoadX509KeyPair(s.ServerCert, s.ServerKey)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	if clientAuth {
		cfg.ClientAuth, cfg.ClientCAs = tls.RequireAndVerifyClientCert, s.Pool
	}
	return cfg
}
