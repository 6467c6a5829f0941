package node

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The command line pprof shows hides every secret a node's flags carry.
func TestCmdlineRedacted(t *testing.T) {
	args := []string{"mink", "serve",
		"--postgres", "postgres://mink:s3cret@db:5432/mink?sslmode=verify-full",
		"--kafka", "k:9092",
		"-schema-registry=https://reg:regpass@registry:8081",
		"--schema-registry-password", "regpw",
		"--schema-registry-token=tok123",
		"--kafka-sasl-password", "saslpw",
		"--kafka-sasl-oauth-client-secret=oauthsecret",
		"--credential", "client:secret",
		"--warehouse", "mink"}
	got := redactArgs(args)
	joined := strings.Join(got, " ")
	for _, s := range []string{"s3cret", "regpass", "regpw", "tok123", "saslpw", "oauthsecret", "client:secret"} {
		require.NotContains(t, joined, s)
	}
	require.Equal(t, "postgres://mink:xxxxx@db:5432/mink?sslmode=verify-full", got[3])
	require.Equal(t, "-schema-registry=https://reg:xxxxx@registry:8081", got[6])
	require.Equal(t, "--schema-registry-token=xxxxx", got[9])
	require.Equal(t, "mink", got[len(got)-1], "other flags are kept")
	require.Equal(t, "host=db user=mink password=xxxxx dbname=mink", redactURL("host=db user=mink password=pw dbname=mink"))
	require.Equal(t, "postgres://db/mink?password=xxxxx&sslmode=require", redactURL("postgres://db/mink?password=pw&sslmode=require"))

	saved := os.Args
	os.Args = args
	defer func() { os.Args = saved }()
	rec := httptest.NewRecorder()
	cmdline(rec, httptest.NewRequest(http.MethodGet, "/debug/pprof/cmdline", nil))
	require.Equal(t, strings.Join(got, "\x00"), rec.Body.String())
}
