// Command withpg runs a command with MINK_TEST_POSTGRES_URL pointing at a
// throwaway PostgreSQL cluster, so that one `go test ./...` run shares one
// cluster (each test still gets its own schema). Usage:
//
//	go run ./internal/pgtest/withpg -- go test ./...
package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	"github.com/minkhq/mink/internal/pglocal"
	"github.com/minkhq/mink/internal/pgtest"
)

func main() {
	args := os.Args[1:]
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: withpg -- COMMAND [ARGS…]")
		os.Exit(2)
	}
	os.Exit(run(args))
}

func run(args []string) int {
	if os.Getenv(pgtest.EnvURL) == "" {
		pg, err := pglocal.StartPostgres(context.Background())
		if err != nil {
			fmt.Fprintln(os.Stderr, "withpg:", err)
			return 1
		}
		defer pg.Stop()
		os.Setenv(pgtest.EnvURL, pg.URL)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	signal.Ignore(os.Interrupt, syscall.SIGTERM) // the child gets them too; stop the server after it
	if err := cmd.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		fmt.Fprintln(os.Stderr, "withpg:", err)
		return 1
	}
	return 0
}
