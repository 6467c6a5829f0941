package cli

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/tables"
)

// TestPropertyFlags: --property and --set take values that hold commas
// (a piece without '=' continues the value before it), several pairs in
// one use and repeated uses; --remove takes lists; what is not KEY=VALUE
// is a usage error.
func TestPropertyFlags(t *testing.T) {
	fs := flag.NewFlagSet("table create", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	def, err := parseTableCreate(fs, []string{"ns.t", "--topic", "t", "--value-format", "raw",
		"--property", "mink.group-tags=billing,etl-*", "--property", "a=1,b=2", "--property", "c="})
	require.NoError(t, err)
	require.Equal(t, map[string]string{"mink.group-tags": "billing,etl-*", "a": "1", "b": "2", "c": ""}, def.Properties)

	fs = flag.NewFlagSet("table properties", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	change, name, err := parseProperties(fs, []string{"ns.t", "--set", "mink.group-tags=billing, audit-?,x",
		"--set", "write.target-file-size-bytes=1048576", "--remove", "history.expire.max-snapshot-age-ms,mink.history.max-snapshots", "--remove", "k"})
	require.NoError(t, err)
	require.Equal(t, "ns.t", name)
	require.Equal(t, tables.PropertyChange{
		Set:    map[string]string{"mink.group-tags": "billing, audit-?,x", "write.target-file-size-bytes": "1048576"},
		Remove: []string{"history.expire.max-snapshot-age-ms", "mink.history.max-snapshots", "k"},
	}, change)

	for _, bad := range [][]string{
		{"ns.t", "--set", "billing"},
		{"ns.t", "--set", "=x"},
		{"ns.t"},
		{"--set", "a=b"},
		{"nst", "--set", "a=b"},
	} {
		fs = flag.NewFlagSet("table properties", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		_, _, err := parseProperties(fs, bad)
		require.Error(t, err, "%v", bad)
	}
}

// mink table properties prints the properties the table has after the
// change, or says it has none.
func TestPropertiesPrinted(t *testing.T) {
	props := `{}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"namespace":"t","name":"tx","topic":"tx","value_format":"raw","properties":%s}`, props)
	}))
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, Main([]string{"table", "properties", "t.tx", "--remove", "mink.group-tags", "--admin", srv.URL}, &stdout, &stderr), stderr.String())
	require.Equal(t, "changed the properties of t.tx: it has none now\n", stdout.String())
	props = `{"mink.history.max-snapshots":"20","mink.group-tags":"a"}`
	stdout.Reset()
	require.Equal(t, 0, Main([]string{"table", "properties", "t.tx", "--set", "mink.group-tags=a", "--admin", srv.URL}, &stdout, &stderr), stderr.String())
	require.Equal(t, "changed the properties of t.tx, now:\n  mink.group-tags=a\n  mink.history.max-snapshots=20\n", stdout.String())
}
