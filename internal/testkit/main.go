package testkit

import (
	"fmt"
	"net/http"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/minkhq/mink/internal/pgtest"
)

// Main runs a package's tests and then checks that they left no goroutine
// running (etcd and River do the same at the end of each package). Call it
// from TestMain.
func Main(m *testing.M) {
	os.Exit(checkLeaks(m.Run()))
}

// MainPostgres is Main for packages whose tests need PostgreSQL: the server
// comes from pgtest.Run (MINK_TEST_POSTGRES_URL, or one throwaway cluster
// for the test binary).
func MainPostgres(m *testing.M) {
	os.Exit(checkLeaks(pgtest.Run(m)))
}

// leakOptions are the goroutines that dependencies keep on purpose, each
// named exactly (goleak.IgnoreTopFunction) with the reason; anything else
// still running after the tests is a leak. None so far: pgx pools, kfake
// and the Kafka clients end their goroutines when closed, and HTTP
// keep-alive connections end when the tests' servers stop (those of the
// default client are closed below in any case).
var leakOptions []goleak.Option

// checkLeaks turns a passing run into a failing one when goroutines are
// left (a failing run keeps its code: its leaks are likely its failures').
func checkLeaks(code int) int {
	if code != 0 {
		return code
	}
	http.DefaultClient.CloseIdleConnections() // their read and write loops end with them
	if err := goleak.Find(leakOptions...); err != nil {
		fmt.Fprintln(os.Stderr, "testkit: goroutines left after the tests:", err)
		return 1
	}
	return 0
}
