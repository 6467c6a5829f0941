package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A mistake in the command line prints "mink <cmd>: <error>" and one line
// pointing at `mink help` to stderr, nothing else, and exits 2; the flag
// package's own usage dump never appears. Nothing here reaches a network.
func TestFlagErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		env  map[string]string
		cmd  string // "mink <cmd>:" prefix
		want string // in the error
	}{
		{[]string{"frob"}, nil, "", `unknown command "frob"`},
		{[]string{"serve", "--bogus"}, nil, "serve", "flag provided but not defined: -bogus"},
		{[]string{"serve", "--lease-ttl", "abc"}, nil, "serve", `invalid value "abc" for flag -lease-ttl`},
		{[]string{"serve", "extra"}, nil, "serve", `unexpected argument "extra"`},
		{[]string{"serve"}, nil, "serve", "--postgres is required (or MINK_POSTGRES_URL)"},
		{[]string{"serve", "--postgres", "postgres://x@127.0.0.1:1/x"}, nil, "serve", "--kafka is required (or MINK_KAFKA_BROKERS)"},
		{[]string{"serve", "--postgres", "postgres://x@127.0.0.1:1/x", "--kafka", "k:1", "--lease-ttl", "-1s"}, nil, "serve", "--lease-ttl must be positive"},
		{[]string{"serve", "--postgres", "postgres://x@127.0.0.1:1/x", "--kafka", "k:1", "--max-partitions", "-1"}, nil, "serve", "--max-partitions must be 0 (no cap) or more"},
		{[]string{"serve", "--postgres", "postgres://x@127.0.0.1:1/x", "--kafka", "k:1", "--flush-interval", "0s"}, nil, "serve", "--flush-interval must be positive"},
		{[]string{"serve", "--postgres", "postgres://x@127.0.0.1:1/x", "--kafka", "k:1", "--flush-interval", "-1s"}, nil, "serve", "--flush-interval must be positive, not -1s"},
		{[]string{"serve", "--postgres", "postgres://x@127.0.0.1:1/x", "--kafka", "k:1", "--warehouse", "a/b"}, nil, "serve", `--warehouse "a/b" is not a bucket name`},
		{[]string{"serve", "--postgres", "postgres://x@127.0.0.1:1/x", "--kafka", "k:1", "--warehouse", "metrics"}, nil, "serve", `--warehouse "metrics" is the path of another of the node's routes`},
		{[]string{"serve", "--postgres", "postgres://x@127.0.0.1:1/x", "--kafka", "k:1", "--warehouse", "admin"}, nil, "serve", `--warehouse "admin" is the path of another of the node's routes`},
		{[]string{"serve", "--postgres", "postgres://x@127.0.0.1:1/x", "--kafka", "k:1", "--warehouse", ".."}, nil, "serve", `--warehouse ".." is not a bucket name`},
		{[]string{"serve", "--postgres", "postgres://x@127.0.0.1:1/x", "--kafka", "k:1", "--warehouse", "v1"}, nil, "serve", `--warehouse "v1" is not a bucket name`},
		{[]string{"serve", "--postgres", "postgres://x@127.0.0.1:1/x", "--kafka", "k:1", "--advertise", "mink-0:8181"}, nil, "serve", `--advertise "mink-0:8181" is not an absolute http(s) URL`},
		{[]string{"serve", "--postgres", "postgres://x@127.0.0.1:1/x", "--kafka", "k:1"}, map[string]string{"MINK_MAX_PARTITIONS": "-3"}, "serve", "--max-partitions must be 0 (no cap) or more, not -3"},
		{[]string{"serve", "--postgres", "postgres://x@127.0.0.1:1/x", "--kafka", "k:1", "--commit-interval", "-2s"}, nil, "serve", "--commit-interval must be positive"},
		{[]string{"serve", "--postgres", "postgres://x@127.0.0.1:1/x", "--kafka", "k:1", "--range-size", "0"}, nil, "serve", "--range-size must be positive"},
		{[]string{"serve", "--postgres", "postgres://x@127.0.0.1:1/x", "--kafka", "k:1", "--auth", "open"}, nil, "serve", `--auth must be principals or none, not "open"`},
		{[]string{"serve", "--postgres", "postgres://x@127.0.0.1:1/x", "--kafka", "k:1"}, map[string]string{"MINK_AUTH": "off"}, "serve", `--auth must be principals or none, not "off"`},
		{[]string{"serve", "--postgres", "postgres://x@127.0.0.1:1/x", "--kafka", "k:1", "--token-ttl", "0s"}, nil, "serve", "--token-ttl must be positive"},
		{[]string{"serve", "--postgres", "postgres://x@127.0.0.1:1/x", "--kafka", "k:1", "--credentials-ttl", "-1m"}, nil, "serve", "--credentials-ttl must be positive"},
		{[]string{"serve", "--postgres", "postgres://x@127.0.0.1:1/x", "--kafka", "k:1", "--credentials-ttl", "30s"}, nil, "serve", "--credentials-ttl must be from 2m0s to 12h0m0s, not 30s"},
		{[]string{"serve", "--postgres", "postgres://x@127.0.0.1:1/x", "--kafka", "k:1", "--credentials-ttl", "200h"}, nil, "serve", "--credentials-ttl must be from 2m0s to 12h0m0s, not 200h0m0s"},
		{[]string{"serve", "--postgres", "postgres://x@127.0.0.1:1/x", "--kafka", "k:1", "--token-ttl", "1s"}, nil, "serve", "--token-ttl must be from 1m0s to 24h0m0s, not 1s"},
		{[]string{"serve", "--postgres", "postgres://x@127.0.0.1:1/x", "--kafka", "k:1"}, map[string]string{"MINK_TOKEN_TTL": "25h"}, "serve", "--token-ttl must be from 1m0s to 24h0m0s, not 25h0m0s"},
		{[]string{"dev", "--auth", "open"}, nil, "dev", `--auth must be principals or none, not "open"`},
		{[]string{"principal", "bogus"}, nil, "principal bogus", `unknown principal command "bogus"`},
		// What no retry could fix fails before any connection.
		{[]string{"serve", "--postgres", "not a url", "--kafka", "k:1"}, nil, "serve", "--postgres is not a PostgreSQL URL or connection string"},
		{[]string{"serve", "--postgres", "postgres://x@127.0.0.1:1/x", "--kafka", "nohostport"}, nil, "serve", `--kafka has "nohostport", not a broker address: want HOST:PORT`},
		{[]string{"serve", "--postgres", "postgres://x@127.0.0.1:1/x", "--kafka", "k:1", "--listen", "bad"}, nil, "serve", `--listen "bad" is not an address to listen on`},
		{[]string{"serve", "--postgres", "postgres://x@127.0.0.1:1/x", "--kafka", "k:1", "--index-memory", "0"}, nil, "serve", "--index-memory must be positive"},
		{[]string{"serve", "--postgres", "postgres://x@127.0.0.1:1/x", "--kafka", "k:1", "--cache-size", "0B"}, nil, "serve", "--cache-size must be positive"},
		{[]string{"serve", "--postgres", "postgres://x@127.0.0.1:1/x", "--kafka", "k:1", "--cache-size", "lots"}, nil, "serve", `invalid value "lots" for flag -cache-size`},
		{[]string{"serve", "--postgres", "postgres://x@127.0.0.1:1/x", "--kafka", "k:1", "--roles", "reader"}, nil, "serve", `unknown role "reader"`},
		{[]string{"serve", "--postgres", "postgres://x@127.0.0.1:1/x", "--kafka", "k:1"}, map[string]string{"MINK_LEASE_TTL": "soon"}, "serve", `MINK_LEASE_TTL="soon"`},
		{[]string{"serve", "--config", "/nonexistent/mink.yaml"}, nil, "serve", "config: open /nonexistent/mink.yaml"},
		{[]string{"serve", "--postgres", "postgres://x@127.0.0.1:1/x", "--kafka", "k:1", "--schema-registry", "registry:8081"}, nil, "serve",
			`--schema-registry "registry:8081" is not http(s)://host[:port][/path]: the scheme must be http or https`},
		{[]string{"serve", "--postgres", "postgres://x@127.0.0.1:1/x", "--kafka", "k:1", "--schema-registry", "http://r:8081", "--schema-registry-user", "u"}, nil, "serve",
			"--schema-registry-password is required with a username"},
		{[]string{"serve", "--postgres", "postgres://x@127.0.0.1:1/x", "--kafka", "k:1", "--schema-registry-token", "t"}, nil, "serve",
			"--schema-registry-token is set but schema_registry.url is empty (no registry)"},
		{[]string{"serve", "--postgres", "postgres://x@127.0.0.1:1/x", "--kafka", "k:1"}, map[string]string{"MINK_SCHEMA_REGISTRY_URL": "http://r", "MINK_SCHEMA_REGISTRY_CA": "/nonexistent/ca.pem"}, "serve",
			"--schema-registry-ca is set but schema_registry.url is http, not https"},
		{[]string{"serve", "--postgres", "postgres://x@127.0.0.1:1/x", "--kafka", "k:1"}, map[string]string{"MINK_SCHEMA_REGISTRY_URL": "https://u:secret@r", "MINK_SCHEMA_REGISTRY_TOKEN": "t"}, "serve",
			"--schema-registry-token is set with basic auth: give one of them"},
		{[]string{"serve", "--postgres", "postgres://x@127.0.0.1:1/x", "--kafka", "k:1", "--tls-cert", "/nonexistent/node.pem"}, nil, "serve",
			"--tls-key is required with tls_cert"},
		{[]string{"serve", "--postgres", "postgres://x@127.0.0.1:1/x", "--kafka", "k:1"}, map[string]string{"MINK_TLS_KEY": "/nonexistent/node.key"}, "serve",
			"--tls-cert is required with tls_key"},
		{[]string{"serve", "--postgres", "postgres://x@127.0.0.1:1/x", "--kafka", "k:1", "--tls-cert", "/nonexistent/node.pem", "--tls-key", "/nonexistent/node.key"}, nil, "serve",
			"--tls-cert and tls_key do not load: open /nonexistent/node.pem"},
		{[]string{"serve", "--postgres", "postgres://x@127.0.0.1:1/x", "--kafka", "k:1", "--tls-ca", "/nonexistent/ca.pem"}, nil, "serve",
			`--tls-ca "/nonexistent/ca.pem": open /nonexistent/ca.pem`},
		{[]string{"dev", "--nodes", "0"}, nil, "dev", "--nodes must be positive, not 0"},
		{[]string{"dev", "--nodes", "-2"}, nil, "dev", "--nodes must be positive, not -2"},
		{[]string{"dev", "--port", "0"}, nil, "dev", "--port must be positive, not 0"},
		{[]string{"dev", "--port", "-1"}, nil, "dev", "--port must leave a port in 1–65535"},
		{[]string{"dev", "--nodes", "3", "--port", "65534"}, nil, "dev", "--port must leave a port in 1–65535"},
		{[]string{"dev", "--schema-registry", "localhost:8081"}, nil, "dev", `--schema-registry "localhost:8081" is not http(s)://host[:port][/path]`},
		{[]string{"table"}, nil, "table", "missing table command"},
		{[]string{"table", "frob"}, nil, "table frob", `unknown table command "frob"`},
		{[]string{"table", "create"}, nil, "table create", "missing table name NS.NAME"},
		{[]string{"table", "create", "ns.t"}, nil, "table create", "--topic is required"},
		{[]string{"table", "create", "ns.t", "--topic", "t"}, nil, "table create", "--value-format is required"},
		{[]string{"table", "create", "nst", "--topic", "t", "--value-format", "raw"}, nil, "table create", `table name "nst" must be NS.NAME`},
		{[]string{"table", "create", "ns.", "--topic", "t", "--value-format", "raw"}, nil, "table create", `table name "ns." must be NS.NAME`},
		{[]string{"table", "create", "ns.t", "--topic", "t", "--value-format", "raw", "--property", "k"}, nil, "table create", `--property "k": want KEY=VALUE`},
		{[]string{"table", "create", "ns.t", "--topic", "t", "--value-format", "avro", "--subject-version", "0"}, nil, "table create",
			"--subject-version 0: a subject version is a number from 1 (leave the flag out to let the plan choose)"},
		{[]string{"table", "create", "ns.t", "--topic", "t", "--value-format", "raw", "--key-format", "avro", "--key-subject-version=0"}, nil, "table create",
			"--key-subject-version 0: a subject version is a number from 1 (leave the flag out to let the plan choose)"},
		{[]string{"table", "create", "ns.t", "extra", "--topic", "t"}, nil, "table create", `unexpected argument "extra"`},
		{[]string{"table", "list", "--bogus"}, nil, "table list", "flag provided but not defined: -bogus"},
		{[]string{"table", "get"}, nil, "table get", "missing table name NS.NAME"},
		{[]string{"table", "delete"}, nil, "table delete", "missing table name NS.NAME"},
		{[]string{"status", "extra"}, nil, "status", `unexpected argument "extra"`},
		{[]string{"status", "--leases=maybe"}, nil, "status", `invalid boolean value "maybe" for -leases`},
		{[]string{"scan"}, nil, "scan", "missing table name NS.NAME"},
		{[]string{"scan", "ns.t", "--limit", "-1"}, nil, "scan", "--limit must be 0 (all rows) or more, not -1"},
		{[]string{"scan", "ns.t", "--limit", "ten"}, nil, "scan", `invalid value "ten" for flag -limit`},
		{[]string{"scan", "ns.t", "--format", "xml"}, nil, "scan", `unknown --format "xml"`},
		{[]string{"scan", "nst"}, nil, "scan", `table name "nst" must be NS.NAME`},
		{[]string{"scan", "a..b"}, nil, "scan", `table name "a..b" has an empty namespace level`},
		{[]string{"table", "create", ".a.b", "--topic", "t", "--value-format", "raw"}, nil, "table create", `table name ".a.b" has an empty namespace level`},
		// A credential without its ':' fails at parse, with the format and
		// without the (secret) value.
		{[]string{"scan", "ns.t", "--credential", "garbage"}, nil, "scan", "--credential must be CLIENT_ID:SECRET, as mink principal create prints it"},
		{[]string{"table", "list"}, map[string]string{"MINK_CREDENTIAL": "id:"}, "table list", "--credential must be CLIENT_ID:SECRET"},
		{[]string{"table", "create", "ns.t", "--topic", "t", "--value-format", "raw", "--credential", ":secret"}, nil, "table create", "--credential must be CLIENT_ID:SECRET"},
		{[]string{"status", "--credential", "garbage"}, nil, "status", "--credential must be CLIENT_ID:SECRET"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			var stdout, stderr bytes.Buffer
			code := Main(c.args, &stdout, &stderr)
			require.Equal(t, 2, code, "stderr: %s", stderr.String())
			require.Empty(t, stdout.String())
			lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
			require.Len(t, lines, 2, "the error and the pointer, nothing more: %q", stderr.String())
			prefix := "mink: "
			if c.cmd != "" {
				prefix = "mink " + c.cmd + ": "
			}
			require.True(t, strings.HasPrefix(lines[0], prefix), "%q starts with %q", lines[0], prefix)
			require.Contains(t, lines[0], c.want)
			require.Equal(t, "Run 'mink help' for usage.", lines[1])
		})
	}
}

// -h after a command prints that command's flags to stdout and exits 0.
func TestCommandHelp(t *testing.T) {
	for _, args := range [][]string{{"scan", "-h"}, {"serve", "--help"}, {"table", "create", "-h"}, {"status", "-h"}, {"dev", "-h"}} {
		var stdout, stderr bytes.Buffer
		require.Equal(t, 0, Main(args, &stdout, &stderr), strings.Join(args, " "))
		require.Empty(t, stderr.String())
		require.Contains(t, stdout.String(), "Flags of mink "+strings.Join(args[:len(args)-1], " ")+":")
		require.Contains(t, stdout.String(), "  -config string")
	}
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, Main([]string{"help"}, &stdout, &stderr))
	require.Contains(t, stdout.String(), "mink scan NS.NAME")

	// scan takes any principal granted the table; table commands an admin.
	stdout.Reset()
	require.Equal(t, 0, Main([]string{"help", "scan"}, &stdout, &stderr))
	require.Contains(t, stdout.String(), "a principal's, granted the table")
	require.NotContains(t, stdout.String(), "admin principal")
	stdout.Reset()
	require.Equal(t, 0, Main([]string{"table", "list", "-h"}, &stdout, &stderr))
	require.Contains(t, stdout.String(), "an admin principal's (mink principal create NAME --admin) CLIENT_ID:SECRET")

	// `mink help serve` is `mink serve -h`.
	stdout.Reset()
	require.Equal(t, 0, Main([]string{"help", "serve"}, &stdout, &stderr))
	require.Empty(t, stderr.String())
	require.Contains(t, stdout.String(), "Flags of mink serve:")
	require.Contains(t, stdout.String(), "  -lease-ttl duration")
}
