package admin_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/minkhq/mink/admin"
	"github.com/minkhq/mink/auth"
	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/internal/testkit"
)

// Under auth principals every admin route needs an admin principal: 401
// without a valid token, 403 for a principal that is not an admin.
func TestAdminNeedsAdmin(t *testing.T) {
	pool, _ := pgtest.Pool(t)
	ctx := context.Background()
	k := testkit.NewKafka(t, kfake.SeedTopics(1, "events"))
	secret, err := auth.ClusterSecret(ctx, pool)
	require.NoError(t, err)
	a := auth.NewAuthenticator(auth.Config{}, auth.NewStore(pool), secret)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/oauth/tokens", a.ServeToken)
	mux.Handle("/admin/v1/", admin.New(pool, k.Client, admin.Config{NodeID: "n1", Auth: a}))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	credential := func(name string, isAdmin bool) string {
		id, sec, err := a.Store().Create(ctx, name, []string{"*"}, isAdmin)
		require.NoError(t, err)
		return id + ":" + sec
	}
	ops := &admin.Client{URL: srv.URL, Credential: credential("ops", true)}
	reader := &admin.Client{URL: srv.URL, Credential: credential("reader", false)}
	anon := &admin.Client{URL: srv.URL}

	_, err = ops.CreateTable(ctx, map[string]any{"namespace": "app", "name": "events", "topic": "events", "value_format": "string"})
	require.NoError(t, err)
	tbls, err := ops.Tables(ctx)
	require.NoError(t, err)
	require.Len(t, tbls, 2) // the table and its dead-letter table

	var se *admin.StatusError
	_, err = reader.Tables(ctx)
	require.True(t, errors.As(err, &se), "%v", err)
	require.Equal(t, http.StatusForbidden, se.Code)
	require.Contains(t, se.Message, "reader is not an admin")
	for _, path := range []string{"/admin/v1/tables", "/admin/v1/nodes", "/admin/v1/leases", "/admin/v1/nodes/n2/cache", "/admin/v1/nope"} {
		err := anon.Do(ctx, http.MethodGet, path, nil, nil)
		require.True(t, errors.As(err, &se), "%s: %v", path, err)
		require.Equal(t, http.StatusUnauthorized, se.Code, path)
		require.Contains(t, se.Message, "no bearer token", path)
	}
	err = anon.DeleteTable(ctx, "app.events")
	require.True(t, errors.As(err, &se))
	require.Equal(t, http.StatusUnauthorized, se.Code)
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/admin/v1/tables", nil)
	req.Header.Set("Authorization", "Bearer mink1.e30.AAAA")
	rsp, _ := testkit.Send(t, req)
	require.Equal(t, http.StatusUnauthorized, rsp.StatusCode)
	require.Contains(t, rsp.Header.Get("WWW-Authenticate"), `error="invalid_token"`)

	_, err = a.Store().Revoke(ctx, "ops")
	require.NoError(t, err)
	bad := &admin.Client{URL: srv.URL, Credential: ops.Credential}
	_, err = bad.Tables(ctx)
	require.ErrorContains(t, err, "invalid_client")
	tbls, err = ops.Tables(ctx) // its token, cached, is refused too
	require.True(t, errors.As(err, &se), "%v %v", tbls, err)
	require.Equal(t, http.StatusUnauthorized, se.Code)
	require.Contains(t, se.Message, "revoked")
}
