package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/minkhq/mink/admin"
	"github.com/minkhq/mink/auth"
	"github.com/minkhq/mink/internal/clustertest"
	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/internal/testca"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/node"
)

// runCLI runs `mink args…` as a fresh process (the test binary, see
// TestMain) with env added to this one's, minus the TLS variables it does
// not set, and returns its exit code, stdout and stderr.
func runCLI(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "SSL_CERT_FILE" && k != "SSL_CERT_DIR" && k != "AWS_CA_BUNDLE" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(append(cmd.Env, cliArgsEnv+"="+strings.Join(args, "\x1f")), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return code, stdout.String(), stderr.String()
}

// The CLI reaches a node serving HTTPS with a private CA as design §5
// says: SSL_CERT_FILE (read by Go for its system roots, once per process,
// hence a fresh process) for the catalog, the admin API and mink scan's S3
// reads; without it the node's certificate is refused.
func TestCLIPrivateCA(t *testing.T) {
	ctx := context.Background()
	ca := testca.New(t)
	k := testkit.NewKafka(t, kfake.SeedTopics(2, "events"))
	cert, key := ca.Issue(t, "a", "a", "127.0.0.1")
	n, err := node.Start(ctx, node.Config{PostgresURL: pgtest.Schema(t), KafkaBrokers: k.Cluster.ListenAddrs(), Listen: "127.0.0.1:0",
		NodeID: "a", FlushInterval: 200 * time.Millisecond, CommitInterval: 200 * time.Millisecond,
		CacheDir: t.TempDir(), TLSCert: cert, TLSKey: key, Auth: auth.ModeNone, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(n.Stop)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: ca.ClientTLS()}}
	defer client.CloseIdleConnections()
	resp, err := client.Post(n.URL()+"/admin/v1/tables", "application/json",
		strings.NewReader(`{"namespace":"tls","name":"events","topic":"events","value_format":"string"}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	for p := range int32(2) {
		k.Produce(t, "events", p, fmt.Sprintf("p%d-a", p), fmt.Sprintf("p%d-b", p))
	}
	testkit.Eventually(t, clustertest.CommitTimeout, 100*time.Millisecond, "tls.events committed", func() (bool, string) {
		resp, err := client.Get(n.URL() + "/admin/v1/tables/tls.events/partitions")
		if err != nil {
			return false, err.Error()
		}
		defer resp.Body.Close()
		var ps admin.TablePartitions
		if err := json.NewDecoder(resp.Body).Decode(&ps); err != nil {
			return false, err.Error()
		}
		for _, p := range ps.Partitions {
			if p.CommittedOffset < 2 {
				return false, fmt.Sprint(ps.Partitions)
			}
		}
		return len(ps.Partitions) == 2, fmt.Sprint(ps.Partitions)
	})

	// SSL_CERT_FILE is enough for the whole scan: the catalog, and the S3
	// reads, as the AWS SDK for Go verifies with Go's roots too.
	scan := []string{"scan", "tls.events", "--admin", n.URL(), "--format", "csv", "--columns", "value", "--limit", "0"}
	code, out, errOut := runCLI(t, []string{"SSL_CERT_FILE=" + ca.File}, scan...)
	require.Equal(t, 0, code, errOut)
	require.ElementsMatch(t, []string{"value", "p0-a", "p0-b", "p1-a", "p1-b"}, strings.Split(strings.TrimSpace(out), "\n"), out)
	code, out, errOut = runCLI(t, []string{"SSL_CERT_FILE=" + ca.File}, "status", "--admin", n.URL())
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "tls.events")

	// AWS_CA_BUNDLE alone reaches no catalog; nothing reaches nothing.
	code, _, errOut = runCLI(t, []string{"AWS_CA_BUNDLE=" + ca.File}, scan...)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "/v1/config")
	require.Contains(t, errOut, "certificate signed by unknown authority")
	code, _, errOut = runCLI(t, nil, "status", "--admin", n.URL())
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "certificate signed by unknown authority")
}
