package devenv_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/devenv"
	"github.com/minkhq/mink/internal/pgtest"
)

// A start that fails (the port is taken) returns the error and stops what
// it had started, instead of panicking or leaking it.
func TestStartEnvFailureCleansUp(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	before, _ := filepath.Glob(filepath.Join(os.TempDir(), "mink-dev-cache-*"))

	_, err = devenv.StartEnv(context.Background(), devenv.DevConfig{PostgresURL: pgtest.Schema(t), BasePort: port})
	require.Error(t, err)
	require.True(t, strings.Contains(err.Error(), "address already in use"), err.Error())
	after, _ := filepath.Glob(filepath.Join(os.TempDir(), "mink-dev-cache-*"))
	require.ElementsMatch(t, before, after, "temporary cache directory removed")
}
