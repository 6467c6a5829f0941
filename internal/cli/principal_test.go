package cli

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/admin"
	"github.com/minkhq/mink/internal/clustertest"
	"github.com/minkhq/mink/internal/testkit"
)

// `mink principal create|list|revoke` against the cluster's Postgres, and
// the admin commands with --credential against a node under auth
// principals.
func TestPrincipalCommands(t *testing.T) {
	env := clustertest.New(t)
	n := env.StartNode(clustertest.NodeOptions{Args: []string{"--auth", "principals"}})
	env.CreateTopic("events", 1)
	t.Setenv("MINK_ADMIN", n.URL()) // also proves --admin of principal create does not read it
	t.Setenv("MINK_CREDENTIAL", "")
	run := func(args ...string) (code int, stdout, stderr string) {
		var out, errOut bytes.Buffer
		code = Main(args, &out, &errOut)
		return code, out.String(), errOut.String()
	}
	credential := regexp.MustCompile(`(?m)^([A-Za-z0-9_-]{16}):([A-Za-z0-9_-]{43})$`)

	code, out, errOut := run("principal", "create", "ops", "--admin", "--postgres", env.PostgresURL)
	require.Equal(t, 0, code, errOut)
	ops := credential.FindString(out)
	require.NotEmpty(t, ops, out)
	code, out, errOut = run("principal", "create", "reader", "--grant", "app.events", "--grant", "other.*", "--postgres", env.PostgresURL)
	require.Equal(t, 0, code, errOut)
	reader := credential.FindString(out)
	require.NotEmpty(t, reader, out)

	for _, bad := range [][]string{
		{"principal", "create", "x", "--postgres", env.PostgresURL},
		{"principal", "create", "x", "--grant", "app", "--postgres", env.PostgresURL},
		{"principal", "create", "-x", "--grant", "app.*", "--postgres", env.PostgresURL},
		{"principal", "create", "x", "--grant", "app.*"},
		{"principal", "revoke", "--postgres", env.PostgresURL},
	} {
		code, _, errOut := run(bad...)
		require.Equal(t, 2, code, "%v: %s", bad, errOut)
	}
	code, _, errOut = run("principal", "create", "ops", "--admin", "--postgres", env.PostgresURL)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "principal ops exists")

	// The admin API: an admin's credential works, none and a reader's do not.
	code, _, errOut = run("table", "create", "app.events", "--topic", "events", "--value-format", "string")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "401 Unauthorized")
	code, _, errOut = run("table", "create", "app.events", "--topic", "events", "--value-format", "string", "--credential", reader)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "403 Forbidden")
	code, out, errOut = run("table", "create", "app.events", "--topic", "events", "--value-format", "string", "--credential", ops)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "created app.events")
	t.Setenv("MINK_CREDENTIAL", ops)
	code, out, errOut = run("table", "list")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "app.events~dlq")
	code, _, errOut = run("status")
	require.Equal(t, 0, code, errOut)

	code, out, errOut = run("principal", "list", "--postgres", env.PostgresURL)
	require.Equal(t, 0, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 3, out)
	require.Equal(t, []string{"NAME", "CLIENT", "ID", "ADMIN", "GRANTS", "CREATED", "REVOKED"}, strings.Fields(lines[0]))
	f := strings.Fields(lines[1])
	require.Equal(t, []string{"ops", strings.Split(ops, ":")[0], "true", "-"}, f[:4])
	require.Equal(t, "-", f[5])
	f = strings.Fields(lines[2])
	require.Equal(t, []string{"reader", strings.Split(reader, ":")[0], "false", "app.events,other.*"}, f[:4])

	code, out, errOut = run("principal", "revoke", "ops", "--postgres", env.PostgresURL)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "revoked principal ops at ")
	code, _, errOut = run("table", "list")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "invalid_client")
	code, out, _ = run("principal", "list", "--postgres", env.PostgresURL)
	require.Equal(t, 0, code)
	require.NotEqual(t, "-", strings.Fields(strings.Split(out, "\n")[1])[5], out)
	code, _, errOut = run("principal", "revoke", "ghost", "--postgres", env.PostgresURL)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "no such principal")

	// mink scan with a reader's credential: a table outside its grants
	// does not exist for it.
	cl, err := kgo.NewClient(kgo.SeedBrokers(env.Brokers...), kgo.DefaultProduceTopic("events"))
	require.NoError(t, err)
	defer cl.Close()
	for i := range 3 {
		require.NoError(t, cl.ProduceSync(context.Background(), &kgo.Record{Value: fmt.Appendf(nil, "e%d", i)}).FirstErr())
	}
	code, out, errOut = run("principal", "create", "other", "--grant", "other.*", "--postgres", env.PostgresURL)
	require.Equal(t, 0, code, errOut)
	other := credential.FindString(out)
	code, _, errOut = run("scan", "app.events", "--credential", other)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "NoSuchTableException")
	code, _, errOut = run("scan", "app.events", "--credential", reader+"x")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "invalid_client")
	_, out, _ = run("principal", "create", "ops2", "--admin", "--postgres", env.PostgresURL)
	ops2 := &admin.Client{URL: n.URL(), Credential: credential.FindString(out)}
	testkit.Eventually(t, 30*time.Second, 100*time.Millisecond, "app.events committed", func() (bool, string) {
		p, err := ops2.Partitions(context.Background(), "app.events")
		if err != nil {
			return false, err.Error()
		}
		return p.Partitions[0].CommittedOffset == 3, fmt.Sprintf("%+v", p.Partitions)
	})
	code, out, errOut = run("scan", "app.events", "--credential", reader, "--format", "csv", "--columns", "value")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "value\ne0\ne1\ne2\n", out)
}
