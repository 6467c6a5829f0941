package schemas_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"

	"github.com/minkhq/mink/codec/wire"
	"github.com/minkhq/mink/internal/settings"
	"github.com/minkhq/mink/internal/testca"
	"github.com/minkhq/mink/outage"
	"github.com/minkhq/mink/schemas"
)

// Avro schemas of a reference chain: Order (subject orders-value) refers
// to Customer (subject customer), which refers to Address (subject
// address).
const (
	addressAvro  = `{"type":"record","name":"Address","namespace":"shop","fields":[{"name":"city","type":"string"}]}`
	customerAvro = `{"type":"record","name":"Customer","namespace":"shop","fields":[{"name":"id","type":"long"},{"name":"address","type":"shop.Address"}]}`
	orderAvroV1  = `{"type":"record","name":"Order","namespace":"shop","fields":[{"name":"id","type":"long"},{"name":"customer","type":"shop.Customer"}]}`
	orderAvroV2  = `{"type":"record","name":"Order","namespace":"shop","fields":[{"name":"id","type":"long"},{"name":"customer","type":"shop.Customer"},{"name":"note","type":["null","string"],"default":null}]}`
)

// seedShop fills reg with the chain; it returns the ids of orders-value
// versions 1 and 2.
func seedShop(t *testing.T, reg *srfake.Registry) (v1, v2 int) {
	t.Helper()
	_, _, err := reg.RegisterSchema("address", sr.Schema{Schema: addressAvro})
	require.NoError(t, err)
	_, _, err = reg.RegisterSchema("customer", sr.Schema{Schema: customerAvro,
		References: []sr.SchemaReference{{Name: "shop.Address", Subject: "address", Version: 1}}})
	require.NoError(t, err)
	refs := []sr.SchemaReference{{Name: "shop.Customer", Subject: "customer", Version: 1}}
	v1, _, err = reg.RegisterSchema("orders-value", sr.Schema{Schema: orderAvroV1, References: refs})
	require.NoError(t, err)
	v2, _, err = reg.RegisterSchema("orders-value", sr.Schema{Schema: orderAvroV2, References: refs})
	require.NoError(t, err)
	return v1, v2
}

func newRegistry(t *testing.T, cfg schemas.RegistryConfig) *schemas.Registry {
	t.Helper()
	r, err := schemas.NewRegistry(cfg)
	require.NoError(t, err)
	t.Cleanup(r.Close)
	return r
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// The chain comes back resolved, each reference with its own id and
// text, in the registry's order.
func TestSchemaByIDResolvesReferences(t *testing.T) {
	fake := srfake.New()
	defer fake.Close()
	v1, _ := seedShop(t, fake)
	r := newRegistry(t, schemas.RegistryConfig{URL: fake.URL()})

	got, err := r.SchemaByID(ctx(t), v1)
	require.NoError(t, err)
	want := &wire.Schema{ID: v1, Type: wire.TypeAvro, Text: orderAvroV1, References: []wire.Reference{{
		Name: "shop.Customer", Subject: "customer", Version: 1,
		Schema: wire.Schema{ID: 2, Type: wire.TypeAvro, Text: customerAvro, References: []wire.Reference{{
			Name: "shop.Address", Subject: "address", Version: 1,
			Schema: wire.Schema{ID: 1, Type: wire.TypeAvro, Text: addressAvro},
		}}},
	}}}
	require.Equal(t, want, got)

	// The whole resolved schema survives JSON (the form it is stored in).
	b, err := json.Marshal(got)
	require.NoError(t, err)
	var back wire.Schema
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, *want, back)
}

func TestSchemaTypes(t *testing.T) {
	fake := srfake.New()
	defer fake.Close()
	proto := "syntax = \"proto3\";\npackage shop;\nmessage Order { int64 id = 1; }\n"
	jsonSchema := `{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"]}`
	pid, _, err := fake.RegisterSchema("p-value", sr.Schema{Schema: proto, Type: sr.TypeProtobuf})
	require.NoError(t, err)
	jid, _, err := fake.RegisterSchema("j-value", sr.Schema{Schema: jsonSchema, Type: sr.TypeJSON})
	require.NoError(t, err)
	r := newRegistry(t, schemas.RegistryConfig{URL: fake.URL()})

	got, err := r.SchemaByID(ctx(t), pid)
	require.NoError(t, err)
	require.Equal(t, &wire.Schema{ID: pid, Type: wire.TypeProtobuf, Text: proto}, got)
	got, err = r.Latest(ctx(t), "j-value")
	require.NoError(t, err)
	require.Equal(t, &wire.Schema{ID: jid, Type: wire.TypeJSON, Text: jsonSchema}, got)
}

func TestLatest(t *testing.T) {
	fake := srfake.New()
	defer fake.Close()
	_, v2 := seedShop(t, fake)
	// The URL may end in a slash.
	r := newRegistry(t, schemas.RegistryConfig{URL: fake.URL() + "/"})

	got, err := r.Latest(ctx(t), "orders-value")
	require.NoError(t, err)
	require.Equal(t, v2, got.ID)
	require.Equal(t, orderAvroV2, got.Text)
	require.Len(t, got.References, 1)
	require.Equal(t, addressAvro, got.References[0].Schema.References[0].Schema.Text)
}

func TestNotFound(t *testing.T) {
	fake := srfake.New()
	defer fake.Close()
	seedShop(t, fake)
	r := newRegistry(t, schemas.RegistryConfig{URL: fake.URL()})

	_, err := r.SchemaByID(ctx(t), 99)
	require.ErrorIs(t, err, schemas.ErrNotFound)
	require.NotErrorIs(t, err, outage.ErrUnavailable)
	require.EqualError(t, err, "schemas: schema id 99: not found in the schema registry: schema not found (error code 40403)")

	_, err = r.Latest(ctx(t), "nope-value")
	require.ErrorIs(t, err, schemas.ErrNotFound)
	require.ErrorContains(t, err, `latest version of subject "nope-value"`)
	require.ErrorContains(t, err, "error code 40401")

	// A reference whose version is gone: the schema cannot be resolved.
	fake.Intercept(func(w http.ResponseWriter, req *http.Request) bool {
		if req.URL.Path != "/subjects/address/versions/1" {
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"error_code":40402,"message":"Version 1 not found."}`)
		return true
	})
	_, err = r.Latest(ctx(t), "orders-value")
	require.ErrorIs(t, err, schemas.ErrNotFound)
	require.ErrorContains(t, err, `reference "shop.Customer" (subject "customer" version 1): schemas: reference "shop.Address" (subject "address" version 1): not found`)
}

// Every failure that is not the registry's "does not exist" is an outage:
// the caller retries, no record is dead-lettered.
func TestUnavailable(t *testing.T) {
	fake := srfake.New()
	v1, _ := seedShop(t, fake)
	r := newRegistry(t, schemas.RegistryConfig{URL: fake.URL()})

	answer := func(status int, body string) func(w http.ResponseWriter, req *http.Request) bool {
		return func(w http.ResponseWriter, req *http.Request) bool {
			w.WriteHeader(status)
			fmt.Fprint(w, body)
			return true
		}
	}
	for _, c := range []struct {
		name, body, msg string
		status          int
	}{
		{"5xx", `{"error_code":50001,"message":"Error in the backend data store"}`,
			"schema id 1: HTTP 500: Error in the backend data store", 500},
		{"404 without a registry code (wrong path)", "<html>404 page not found</html>",
			"HTTP 404: <html>404 page not found</html>", 404},
		{"not json", "nonsense", "unable to decode ok response body", 200},
	} {
		t.Run(c.name, func(t *testing.T) {
			fake.ClearInterceptors()
			fake.Intercept(answer(c.status, c.body))
			_, err := r.SchemaByID(ctx(t), 1)
			require.ErrorIs(t, err, outage.ErrUnavailable)
			require.NotErrorIs(t, err, schemas.ErrNotFound)
			require.ErrorContains(t, err, c.msg)
		})
	}
	fake.ClearInterceptors()
	_, err := r.SchemaByID(ctx(t), v1)
	require.NoError(t, err)

	url := fake.URL()
	fake.Close()
	_, err = r.SchemaByID(ctx(t), v1)
	require.ErrorIs(t, err, outage.ErrUnavailable)
	require.ErrorContains(t, err, fmt.Sprintf("schemas: registry %s: schema id %d: ", url, v1))
	require.ErrorContains(t, err, "connection refused")
	_, err = r.Latest(ctx(t), "orders-value")
	require.ErrorIs(t, err, outage.ErrUnavailable)

	// A request that gets no answer ends at RequestTimeout, or sooner
	// with the caller's context.
	stall := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		select {
		case <-stall:
		case <-req.Context().Done():
		}
	}))
	defer slow.Close()
	defer close(stall)
	rs := newRegistry(t, schemas.RegistryConfig{URL: slow.URL})
	c, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	_, err = rs.SchemaByID(c, 1)
	require.ErrorIs(t, err, outage.ErrUnavailable)
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

func TestAuth(t *testing.T) {
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("mink:s3cret"))
	for _, c := range []struct {
		name   string
		expect string
		good   []schemas.RegistryConfig
		bad    map[string]schemas.RegistryConfig // wanted message → config
	}{
		{"basic", basic,
			[]schemas.RegistryConfig{{Username: "mink", Password: "s3cret"}, {URL: "mink:s3cret@"}},
			map[string]schemas.RegistryConfig{
				"HTTP 403: User not authorized":          {Username: "mink", Password: "wrong"},
				"HTTP 401: Missing Authorization header": {},
			}},
		{"bearer", "Bearer tok",
			[]schemas.RegistryConfig{{Token: "tok"}},
			map[string]schemas.RegistryConfig{
				"HTTP 403: User not authorized":          {Token: "other"},
				"HTTP 401: Missing Authorization header": {},
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			fake := srfake.New(srfake.WithAuth(c.expect))
			defer fake.Close()
			id, _, err := fake.RegisterSchema("a-value", sr.Schema{Schema: addressAvro})
			require.NoError(t, err)
			withURL := func(cfg schemas.RegistryConfig) schemas.RegistryConfig {
				// cfg.URL holds user:password@ to put in the URL, if any.
				cfg.URL = strings.Replace(fake.URL(), "http://", "http://"+cfg.URL, 1)
				return cfg
			}
			for _, cfg := range c.good {
				got, err := newRegistry(t, withURL(cfg)).SchemaByID(ctx(t), id)
				require.NoError(t, err, "%+v", cfg)
				require.Equal(t, addressAvro, got.Text)
			}
			for msg, cfg := range c.bad {
				_, err := newRegistry(t, withURL(cfg)).SchemaByID(ctx(t), id)
				require.ErrorIs(t, err, outage.ErrUnavailable, "a misconfigured registry is an outage, not a dead letter")
				require.ErrorContains(t, err, msg)
			}
		})
	}
}

// The password of a URL with user:password@ never reaches a message.
func TestURLCredentialsHidden(t *testing.T) {
	fake := srfake.New()
	url := fake.URL()
	fake.Close()
	r := newRegistry(t, schemas.RegistryConfig{URL: strings.Replace(url, "http://", "http://mink:s3cret@", 1)})
	require.Equal(t, url, r.URL())
	_, err := r.SchemaByID(ctx(t), 1)
	require.ErrorIs(t, err, outage.ErrUnavailable)
	require.NotContains(t, err.Error(), "s3cret")
	require.NotContains(t, err.Error(), "mink@")
}

// tlsRegistry serves a fake registry over TLS; caFile holds its
// certificate in PEM.
func tlsRegistry(t *testing.T) (fake *srfake.Registry, url, caFile string) {
	fake = srfake.NewRegistry()
	srv := httptest.NewTLSServer(fake.Handler())
	t.Cleanup(srv.Close)
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	return fake, srv.URL, writeFile(t, "ca.pem", string(pemBytes))
}

// testCAPEM is a new self-signed CA certificate in PEM (not the one
// every httptest TLS server shares).
func testCAPEM(t *testing.T) []byte {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "mink test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func TestTLS(t *testing.T) {
	fake, url, ca := tlsRegistry(t)
	id, _, err := fake.RegisterSchema("a-value", sr.Schema{Schema: addressAvro})
	require.NoError(t, err)

	got, err := newRegistry(t, schemas.RegistryConfig{URL: url, CAFile: ca}).SchemaByID(ctx(t), id)
	require.NoError(t, err)
	require.Equal(t, addressAvro, got.Text)

	_, err = newRegistry(t, schemas.RegistryConfig{URL: url}).SchemaByID(ctx(t), id)
	require.ErrorIs(t, err, outage.ErrUnavailable)
	require.ErrorContains(t, err, "certificate signed by unknown authority")

	// Another CA is not trusted either: only CAFile's certificates are.
	_, err = newRegistry(t, schemas.RegistryConfig{URL: url, CAFile: writeFile(t, "other.pem", string(testCAPEM(t)))}).
		SchemaByID(ctx(t), id)
	require.ErrorIs(t, err, outage.ErrUnavailable)

	_, err = schemas.NewRegistry(schemas.RegistryConfig{URL: "http://r", CAFile: ca})
	require.ErrorContains(t, err, "schema_registry.ca_file is set but schema_registry.url is http")
	_, err = schemas.NewRegistry(schemas.RegistryConfig{})
	require.Error(t, err)
}

// A registry behind TLS that requires a client certificate: the
// certificate and key of CertFile and KeyFile are presented; without them
// the handshake fails.
func TestTLSClientCertificate(t *testing.T) {
	certs := testca.NewSet(t)
	fake := srfake.NewRegistry()
	srv := httptest.NewUnstartedServer(fake.Handler())
	srv.TLS = certs.ServerTLS(t, true)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	id, _, err := fake.RegisterSchema("a-value", sr.Schema{Schema: addressAvro})
	require.NoError(t, err)

	got, err := newRegistry(t, schemas.RegistryConfig{URL: srv.URL, CAFile: certs.CAFile, CertFile: certs.ClientCert,
		KeyFile: certs.ClientKey}).SchemaByID(ctx(t), id)
	require.NoError(t, err)
	require.Equal(t, addressAvro, got.Text)

	_, err = newRegistry(t, schemas.RegistryConfig{URL: srv.URL, CAFile: certs.CAFile}).SchemaByID(ctx(t), id)
	require.ErrorIs(t, err, outage.ErrUnavailable)
	require.ErrorContains(t, err, "certificate required")

	for _, c := range []struct {
		cfg       schemas.RegistryConfig
		key, want string
	}{
		{schemas.RegistryConfig{URL: srv.URL, CertFile: certs.ClientCert}, schemas.KeyKeyFile, "is required with schema_registry.cert_file"},
		{schemas.RegistryConfig{URL: srv.URL, KeyFile: certs.ClientKey}, schemas.KeyCertFile, "is required with schema_registry.key_file"},
		{schemas.RegistryConfig{URL: srv.URL, CertFile: certs.ClientCert, KeyFile: certs.ServerKey}, schemas.KeyCertFile, "does not match"},
		{schemas.RegistryConfig{URL: "http://r", CertFile: certs.ClientCert, KeyFile: certs.ClientKey}, schemas.KeyCertFile, "is http, not https"},
		{schemas.RegistryConfig{CertFile: certs.ClientCert}, schemas.KeyCertFile, "is empty (no registry)"},
	} {
		err := c.cfg.Validate()
		var se *settings.Error
		require.True(t, errors.As(err, &se), "%+v: %v", c.cfg, err)
		require.Equal(t, c.key, se.Key)
		require.ErrorContains(t, err, c.want)
	}
}

// A reference chain that loops, or nests deeper than MaxReferenceDepth,
// is refused (the registry cannot hold such a chain; a corrupt one must
// not make Mink recurse without end). A schema two references share is
// no cycle.
func TestReferenceCycleAndDepth(t *testing.T) {
	fake := srfake.New()
	defer fake.Close()
	id, _, err := fake.RegisterSchema("root-value", sr.Schema{Schema: addressAvro})
	require.NoError(t, err)
	// chain answers subject sN version 1 with a schema that refers to
	// next(N).
	chain := func(next func(n int) (int, bool)) {
		fake.ClearInterceptors()
		fake.Intercept(func(w http.ResponseWriter, req *http.Request) bool {
			var n int
			if _, err := fmt.Sscanf(req.URL.Path, "/subjects/s%d/versions/1", &n); err != nil {
				if req.URL.Path == fmt.Sprintf("/schemas/ids/%d", id) {
					fmt.Fprint(w, `{"schema":"{}","references":[{"name":"n0","subject":"s0","version":1}]}`)
					return true
				}
				return false
			}
			ss := sr.SubjectSchema{Subject: fmt.Sprintf("s%d", n), Version: 1, ID: 1000 + n, Schema: sr.Schema{Schema: "{}"}}
			if m, ok := next(n); ok {
				ss.References = []sr.SchemaReference{{Name: fmt.Sprintf("n%d", m), Subject: fmt.Sprintf("s%d", m), Version: 1}}
			}
			_ = json.NewEncoder(w).Encode(ss)
			return true
		})
	}
	r := newRegistry(t, schemas.RegistryConfig{URL: fake.URL()})

	chain(func(n int) (int, bool) { return (n + 1) % 3, true }) // s0 → s1 → s2 → s0
	_, err = r.SchemaByID(ctx(t), id)
	require.ErrorIs(t, err, schemas.ErrInvalid)
	require.NotErrorIs(t, err, outage.ErrUnavailable)
	require.ErrorContains(t, err, `reference "n0" (subject "s0" version 1) refers back to itself`)

	chain(func(n int) (int, bool) { return n + 1, true }) // endless
	_, err = r.SchemaByID(ctx(t), id)
	require.ErrorIs(t, err, schemas.ErrInvalid)
	require.ErrorContains(t, err, "references nested deeper than 32")

	chain(func(n int) (int, bool) { return n + 1, n+1 < schemas.MaxReferenceDepth }) // exactly 32 deep
	got, err := r.SchemaByID(ctx(t), id)
	require.NoError(t, err)
	depth := 0
	for s := got; len(s.References) > 0; s = &s.References[0].Schema {
		depth++
	}
	require.Equal(t, schemas.MaxReferenceDepth, depth)
	require.Equal(t, 1000+schemas.MaxReferenceDepth-1, func() int {
		s := got
		for len(s.References) > 0 {
			s = &s.References[0].Schema
		}
		return s.ID
	}())
}

// A diamond (two references to one schema) resolves both, fetching the
// shared one once.
func TestSharedReference(t *testing.T) {
	fake := srfake.New()
	defer fake.Close()
	_, _, err := fake.RegisterSchema("address", sr.Schema{Schema: addressAvro})
	require.NoError(t, err)
	ref := sr.SchemaReference{Name: "shop.Address", Subject: "address", Version: 1}
	_, _, err = fake.RegisterSchema("customer", sr.Schema{Schema: customerAvro, References: []sr.SchemaReference{ref}})
	require.NoError(t, err)
	text := `{"type":"record","name":"Pair","namespace":"shop","fields":[{"name":"c","type":"shop.Customer"},{"name":"a","type":"shop.Address"}]}`
	id, _, err := fake.RegisterSchema("pair-value", sr.Schema{Schema: text, References: []sr.SchemaReference{
		{Name: "shop.Customer", Subject: "customer", Version: 1}, ref}})
	require.NoError(t, err)
	fetches := 0
	fake.Intercept(func(w http.ResponseWriter, req *http.Request) bool {
		if req.URL.Path == "/subjects/address/versions/1" {
			fetches++
		}
		return false
	})
	got, err := newRegistry(t, schemas.RegistryConfig{URL: fake.URL()}).SchemaByID(ctx(t), id)
	require.NoError(t, err)
	require.Len(t, got.References, 2)
	require.Equal(t, got.References[1].Schema, got.References[0].Schema.References[0].Schema)
	require.Equal(t, addressAvro, got.References[1].Schema.Text)
	require.Equal(t, 1, fetches)
}

// Subjects names the subjects an id is a version of; the same schema
// registered under two subjects has one id and both subjects.
func TestSubjects(t *testing.T) {
	fake := srfake.New()
	defer fake.Close()
	v1, _ := seedShop(t, fake)
	r := newRegistry(t, schemas.RegistryConfig{URL: fake.URL()})
	got, err := r.Subjects(ctx(t), v1)
	require.NoError(t, err)
	require.Equal(t, []string{"orders-value"}, got)
	_, err = r.Subjects(ctx(t), 999)
	require.ErrorIs(t, err, schemas.ErrNotFound)
}
