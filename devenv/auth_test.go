package devenv_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/admin"
	"github.com/minkhq/mink/devenv"
	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/internal/testkit"
)

// Under Principals the environment has an admin principal whose
// credential the admin API takes; without one it answers 401.
func TestStartEnvPrincipals(t *testing.T) {
	ctx := context.Background()
	env, err := devenv.StartEnv(ctx, devenv.DevConfig{PostgresURL: pgtest.Schema(t), EphemeralPorts: true, Principals: true})
	require.NoError(t, err)
	t.Cleanup(env.Stop)
	require.Regexp(t, `^[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]{43}$`, env.Credential)
	require.NotNil(t, env.Nodes[0].Auth())

	_, err = (&admin.Client{URL: env.Nodes[0].URL(), Credential: env.Credential}).Tables(ctx)
	require.NoError(t, err)
	var se *admin.StatusError
	_, err = (&admin.Client{URL: env.Nodes[0].URL()}).Tables(ctx)
	require.True(t, errors.As(err, &se), "%v", err)
	require.Equal(t, http.StatusUnauthorized, se.Code)

	// A second admin of the same name gets a suffix, not an error.
	again, err := env.CreatePrincipal(ctx, "dev-admin", true)
	require.NoError(t, err)
	require.NotEqual(t, env.Credential, again)

	none, err := devenv.StartEnv(ctx, devenv.DevConfig{PostgresURL: pgtest.Schema(t), EphemeralPorts: true})
	require.NoError(t, err)
	t.Cleanup(none.Stop)
	require.Empty(t, none.Credential)
	require.Nil(t, none.Nodes[0].Auth())
	_, err = (&admin.Client{URL: none.Nodes[0].URL()}).Tables(ctx)
	require.NoError(t, err)
}

// The CLI finds the credential `mink dev` wrote for a loopback node, and
// only for one.
func TestDevCredential(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	f := devenv.CredentialFile("18181")
	require.NoError(t, os.MkdirAll(filepath.Dir(f), 0o700))
	require.NoError(t, os.WriteFile(f, []byte("id:secret\n"), 0o600))
	for _, u := range []string{"http://127.0.0.1:18181", "http://localhost:18181/", "http://[::1]:18181"} {
		c, ok := devenv.DevCredential(u)
		require.True(t, ok, u)
		require.Equal(t, "id:secret", c, u)
	}
	for _, u := range []string{"http://10.0.0.1:18181", "http://mink-0:18181", "http://127.0.0.1:18182", "http://127.0.0.1"} {
		_, ok := devenv.DevCredential(u)
		require.False(t, ok, u)
	}
}

// `mink dev` with no set-up: its banner gives an admin and a reader
// credential, the admin's is in the file the CLI reads while it runs, and
// the file is gone when it stops.
func TestDevBannerCredentials(t *testing.T) {
	data, ok := devenv.FindData(devenv.USGSFile)
	if !ok {
		t.Skip("no " + devenv.USGSFile)
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &testkit.SyncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- devenv.Dev(ctx, devenv.DevConfig{PostgresURL: pgtest.Schema(t), EphemeralPorts: true, Principals: true,
			DataFile: data, Out: out, Logger: slog.New(slog.DiscardHandler)})
	}()
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(out.String(), "Ctrl-C stops everything") {
		select {
		case err := <-done:
			t.Fatalf("Dev ended: %v\n%s", err, out.String())
		case <-time.After(100 * time.Millisecond):
		}
		require.True(t, time.Now().Before(deadline), "no banner: %s", out.String())
	}
	banner := out.String()
	adminCred := regexp.MustCompile(`Admin credential: +(\S+)`).FindStringSubmatch(banner)
	reader := regexp.MustCompile(`Reader credential: +(\S+)`).FindStringSubmatch(banner)
	nodeURL := regexp.MustCompile(`Iceberg REST catalog: +(\S+)`).FindStringSubmatch(banner)
	require.Len(t, adminCred, 2, banner)
	require.Len(t, reader, 2, banner)
	require.Len(t, nodeURL, 2, banner)
	require.Contains(t, banner, `credential="`+reader[1]+`"`)
	require.Contains(t, banner, "principal create NAME --grant 'NS.*' --postgres URL\n", "an external Postgres's URL is not printed")

	got, ok := devenv.DevCredential(nodeURL[1])
	require.True(t, ok)
	require.Equal(t, adminCred[1], got)
	tbls, err := (&admin.Client{URL: nodeURL[1], Credential: got}).Tables(ctx)
	require.NoError(t, err)
	require.Len(t, tbls, 4, "the demo's two tables and their dead-letter tables")
	var se *admin.StatusError
	_, err = (&admin.Client{URL: nodeURL[1], Credential: reader[1]}).Tables(ctx)
	require.True(t, errors.As(err, &se), "%v", err)
	require.Equal(t, http.StatusForbidden, se.Code)

	cancel()
	require.NoError(t, <-done)
	_, ok = devenv.DevCredential(nodeURL[1])
	require.False(t, ok, "credential file left behind")
}
