package e2e

import (
	"os"
	"strings"
	"testing"

	"github.com/minkhq/mink/internal/cli"
	"github.com/minkhq/mink/internal/testkit"
)

// cliArgsEnv, when set, makes the test binary a fresh `mink` process
// running these arguments (joined by 0x1F): what a process reads once,
// such as SSL_CERT_FILE, is tested in one (runCLI).
const cliArgsEnv = "MINK_E2E_CLI_ARGS"

func TestMain(m *testing.M) {
	if args, ok := os.LookupEnv(cliArgsEnv); ok {
		os.Exit(cli.Main(strings.Split(args, "\x1f"), os.Stdout, os.Stderr))
	}
	testkit.MainPostgres(m)
}
