// Package registryproc runs a real Schema Registry for the compatibility
// tests: Apicurio Registry (2.4.2.Final, Maven Central's artifacts built by
// scripts/ensure-maven from compat/deps/apicurio-registry) as a separate
// Java process on a free loopback port, with its default in-memory storage,
// reached through its Confluent-compatible API.
//
// Both install from the package registries on first use (minutes) and are
// cached in the user's cache directory afterwards, so the tests that use
// them run only when MINK_COMPAT=1; otherwise they are skipped.
package registryproc

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/internal/testkit/proc"
)

// Version is the Apicurio Registry that compat/deps/apicurio-registry
// builds.
const Version = "2.4.2.Final"

// StartTimeout bounds the wait for the registry to answer once its process
// started (it starts in about 15 s on two cores).
const StartTimeout = 3 * time.Minute

// Start starts Apicurio Registry on a free loopback port and returns the
// URL of its Confluent-compatible API (http://127.0.0.1:PORT/apis/ccompat/v7),
// the URL that `mink serve --schema-registry` and Confluent's clients take.
// The process is killed when the test ends (and by the kernel if the test
// binary dies); its log is printed if the test failed. It skips t unless
// MINK_COMPAT=1, and fails t when the registry does not answer within
// StartTimeout.
func Start(t testing.TB) string {
	t.Helper()
	testkit.SkipUnlessCompat(t)
	dir, err := testkit.Ensure("ensure-maven", "apicurio-registry")
	if err != nil {
		t.Fatalf("registryproc: %v", err)
	}
	jar := filepath.Join(dir, "apicurio-registry-1-runner.jar")
	if _, err := os.Stat(jar); err != nil {
		t.Fatalf("registryproc: %v", err)
	}
	port, err := proc.FreePort()
	if err != nil {
		t.Fatalf("registryproc: free port: %v", err)
	}
	java := "java"
	if home := os.Getenv("JAVA_HOME"); home != "" {
		java = filepath.Join(home, "bin", "java")
	}
	logPath := filepath.Join(t.TempDir(), "registry.log")
	start := time.Now()
	p, err := proc.Start(java, []string{
		"-Xmx512m",
		fmt.Sprintf("-Dquarkus.http.port=%d", port),
		"-Dquarkus.http.host=127.0.0.1",
		"-jar", jar,
	}, logPath)
	if err != nil {
		t.Fatalf("registryproc: %v", err)
	}
	t.Cleanup(func() {
		p.Kill()
		<-p.Done()
		if t.Failed() {
			t.Logf("--- registry log (%s), last lines:\n%s", logPath, strings.Join(p.Tail(40, nil), "\n"))
		}
	})
	url := fmt.Sprintf("http://127.0.0.1:%d/apis/ccompat/v7", port)
	ctx, cancel := context.WithTimeout(context.Background(), StartTimeout)
	defer cancel()
	for {
		err := proc.GetJSON(ctx, url+"/subjects", nil)
		if err == nil {
			break
		}
		select {
		case <-p.Done():
			t.Fatalf("registryproc: the registry exited (%v):\n%s", p.WaitErr(), strings.Join(p.Tail(40, nil), "\n"))
		case <-ctx.Done():
			t.Fatalf("registryproc: no answer from %s after %s: %v", url, StartTimeout, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
	t.Logf("registryproc: Apicurio Registry answers at %s (started in %s)", url, time.Since(start).Round(time.Millisecond))
	return url
}
