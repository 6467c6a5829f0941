package clustertest

import (
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// EnvBinary names a variable that points at a prebuilt mink binary; when
// it is unset the binary is built from the module once per test binary.
const EnvBinary = "MINK_TEST_BINARY"

var build struct {
	once sync.Once
	path string
	err  error
}

// Binary returns the path of the mink binary, building it on first use
// (`go build -o <temp>/mink ./cmd/mink` at the module root found by
// `go env GOMOD`). The build is shared by every test of the test binary.
func Binary(t testing.TB) string {
	t.Helper()
	build.once.Do(func() {
		if p := os.Getenv(EnvBinary); p != "" {
			build.path = p
			return
		}
		build.path, build.err = buildMink()
	})
	if build.err != nil {
		t.Fatalf("clustertest: build mink: %v", build.err)
	}
	return build.path
}

func buildMink() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("not inside a Go module")
	}
	// One directory per user and module checkout: the process cleans
	// nothing up at its end (TestMain belongs to the package), so keep it
	// to one stable place that each run overwrites, and that the tests of
	// another clone on the machine do not share.
	sum := sha256.Sum256([]byte(gomod))
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("mink-clustertest-%d-%x", os.Getuid(), sum[:4]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	// Build to a name of our own, then rename over the shared one: test
	// binaries of other packages may be running the previous build.
	tmp, err := os.CreateTemp(dir, "mink-build-*")
	if err != nil {
		return "", err
	}
	tmp.Close()
	cmd := exec.Command("go", "build", "-o", tmp.Name(), "./cmd/mink")
	cmd.Dir = filepath.Dir(gomod)
	if b, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("go build ./cmd/mink: %w\n%s", err, b)
	}
	path := filepath.Join(dir, "mink")
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	return path, nil
}
