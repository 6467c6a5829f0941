package pgstore_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/internal/pglocal"
	"github.com/minkhq/mink/internal/testca"
	"github.com/minkhq/mink/pgstore"
)

// withQuery returns u with its query's key set to v ("" removes it).
func withQuery(t *testing.T, u, key, v string) string {
	t.Helper()
	p, err := url.Parse(u)
	require.NoError(t, err)
	q := p.Query()
	if v == "" {
		q.Del(key)
	} else {
		q.Set(key, v)
	}
	p.RawQuery = q.Encode()
	return p.String()
}

// PostgreSQL over TLS through the node's path (pgstore.Open, the URL's
// sslmode=verify-full, sslrootcert, sslcert, sslkey): a server that takes
// TLS connections with a client certificate only. The session is
// encrypted; another root certificate, no client certificate or no TLS
// are each refused with the reason.
func TestOpenOverTLS(t *testing.T) {
	if _, err := pglocal.FindPostgresBin(); err != nil {
		t.Skip(err)
	}
	ctx := context.Background()
	certs := testca.NewSet(t)
	pg, err := pglocal.StartPostgresTLS(ctx, pglocal.TLS{ServerCert: certs.ServerCert, ServerKey: certs.ServerKey,
		CAFile: certs.CAFile, ClientCert: certs.ClientCert, ClientKey: certs.ClientKey}, testca.ClientName)
	require.NoError(t, err)
	t.Cleanup(pg.Stop)
	require.Contains(t, pg.URL, "sslmode=verify-full")

	pool, err := pgstore.Open(ctx, pgstore.Config{URL: pg.URL, Schema: "tls_test"})
	require.NoError(t, err)
	defer pool.Close()
	var ssl bool
	var version, user string
	require.NoError(t, pool.QueryRow(ctx, `SELECT s.ssl, s.version, current_user FROM pg_stat_ssl s WHERE s.pid = pg_backend_pid()`).
		Scan(&ssl, &version, &user))
	require.True(t, ssl)
	require.True(t, strings.HasPrefix(version, "TLSv1."), version)
	require.Equal(t, testca.ClientName, user)
	var migrations int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM goose_db_version`).Scan(&migrations))
	require.Positive(t, migrations)

	other := testca.NewSet(t)
	for _, tc := range []struct {
		name, url, want string
	}{
		{"another root certificate", withQuery(t, pg.URL, "sslrootcert", other.CAFile), "certificate signed by unknown authority"},
		{"no client certificate", withQuery(t, withQuery(t, pg.URL, "sslcert", ""), "sslkey", ""), "connection requires a valid client certificate"},
		{"no TLS", withQuery(t, pg.URL, "sslmode", "disable"), "no encryption"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := pgstore.Open(ctx, pgstore.Config{URL: tc.url})
			require.ErrorContains(t, err, tc.want)
		})
	}
	// A root certificate file that does not exist is a setting error,
	// before any connection.
	err = pgstore.Config{URL: withQuery(t, pg.URL, "sslrootcert", "/nonexistent/ca.pem")}.Validate()
	require.ErrorContains(t, err, "postgres is not a PostgreSQL URL")
}
