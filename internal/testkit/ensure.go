package testkit

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// EnvCompat names the variable that turns on the compatibility tests
// (`make compat` sets MINK_COMPAT=1 after installing what they run: a
// real Kafka, a Schema Registry, the engines; Java among them).
const EnvCompat = "MINK_COMPAT"

// SkipUnlessCompat skips t unless MINK_COMPAT=1, so that `make test`
// never needs what only the compatibility suite installs.
func SkipUnlessCompat(t testing.TB) {
	t.Helper()
	if os.Getenv(EnvCompat) != "1" {
		t.Skip("MINK_COMPAT is not 1: make compat runs this test")
	}
}

// Ensure runs the project's install script scripts/<script> with args
// (ensure-python, ensure-maven NAME, ensure-trino: each installs from a
// package registry into the user's cache on first use and prints the
// folder it installed) from the module's root, and returns that folder:
// the last line the script printed. The error quotes the script's
// standard error.
func Ensure(script string, args ...string) (string, error) {
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	cmd := exec.Command(filepath.Join(root, "scripts", script), args...)
	cmd.Dir = root
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("scripts/%s %s: %w\n%s", script, strings.Join(args, " "), err, stderr.String())
	}
	out := strings.TrimSpace(stdout.String())
	if i := strings.LastIndexByte(out, '\n'); i >= 0 {
		out = out[i+1:]
	}
	if out == "" {
		return "", fmt.Errorf("scripts/%s %s printed no folder", script, strings.Join(args, " "))
	}
	return out, nil
}

// ModuleRoot returns the folder of the go.mod of the module the working
// directory is in (a test's working directory is its package's folder).
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("testkit: no go.mod above the working directory")
		}
		dir = parent
	}
}
