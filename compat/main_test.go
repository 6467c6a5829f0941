package compat

import (
	"fmt"
	"os"
	"testing"

	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/internal/testkit"
)

// EnvMatrix names a file the matrix is written to as well (Markdown).
const EnvMatrix = "MINK_COMPAT_MATRIX"

func TestMain(m *testing.M) {
	if os.Getenv(testkit.EnvCompat) != "1" {
		fmt.Println("compat: skipped: MINK_COMPAT is not 1 (`make compat` runs the suite)")
		os.Exit(0)
	}
	code := pgtest.Run(m)
	matrix.print(os.Stdout)
	if f := os.Getenv(EnvMatrix); f != "" {
		if w, err := os.Create(f); err == nil {
			matrix.print(w)
			_ = w.Close()
		}
	}
	os.Exit(code)
}
