package compat

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minkhq/mink/internal/testkit"
)

var venv struct {
	once sync.Once
	dir  string
	err  error
}

// python returns the interpreter of the suite's virtual environment
// (scripts/ensure-python: compat/requirements.txt, installed from PyPI
// into the user's cache on first use).
func python(t testing.TB) string {
	t.Helper()
	venv.once.Do(func() {
		venv.dir, venv.err = testkit.Ensure("ensure-python")
	})
	if venv.err != nil {
		t.Fatal(venv.err)
	}
	return filepath.Join(venv.dir, "bin", "python")
}

// runPython runs a script of the suite (a path below compat/) with args
// and returns its standard output; it fails the test when the script
// exits non-zero, showing its standard error.
func runPython(t testing.TB, timeout time.Duration, script string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, python(t), append([]string{script}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\nstderr:\n%s", script, err, tail(stderr.String(), 60))
	}
	if s := strings.TrimSpace(stderr.String()); s != "" {
		t.Logf("%s stderr:\n%s", script, tail(s, 20))
	}
	return stdout.Bytes()
}

// jsonLines decodes each non-empty line of out into a T.
func jsonLines[T any](t testing.TB, out []byte) []T {
	t.Helper()
	var res []T
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var v T
		if err := json.Unmarshal(line, &v); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		res = append(res, v)
	}
	return res
}

func tail(s string, lines int) string {
	ls := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(ls) > lines {
		ls = ls[len(ls)-lines:]
	}
	return strings.Join(ls, "\n")
}

func writeJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
