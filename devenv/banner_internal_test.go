package devenv

import (
	"os/exec"
	"testing"

	"github.com/minkhq/mink/internal/pglocal"
)

// The banner's --postgres argument of the throwaway cluster is one shell
// word, its '?' no glob: sh (and zsh, when installed) read it back as the URL.
func TestPgArgQuoted(t *testing.T) {
	url := "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	arg := pgArg(&Env{Postgres: &pglocal.Postgres{URL: url}})
	for _, shell := range []string{"sh", "zsh"} {
		if _, err := exec.LookPath(shell); err != nil {
			continue
		}
		out, err := exec.Command(shell, "-c", "printf %s "+arg).Output()
		if err != nil || string(out) != url {
			t.Fatalf("%s read %s as %q, %v", shell, arg, out, err)
		}
	}
	if got := pgArg(&Env{}); got != "URL" {
		t.Fatalf("external Postgres: %q", got)
	}
}
