package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/internal/clustertest"
)

// TestScan runs `mink table create` and `mink scan` against a real node:
// decimals, floats and binary print exact in every format, and a scan cut
// by its limit says on stderr how many rows it left out.
func TestScan(t *testing.T) {
	env := clustertest.New(t)
	n := env.StartNode(clustertest.NodeOptions{})
	env.CreateTopic("vals", 1)
	schema := filepath.Join(t.TempDir(), "vals.schema.json")
	require.NoError(t, os.WriteFile(schema, []byte(`{"type":"struct","fields":[
		{"id":1,"name":"n","required":true,"type":"long"},
		{"id":2,"name":"tiny","required":false,"type":"decimal(38, 8)"},
		{"id":3,"name":"price","required":false,"type":"decimal(10, 3)"},
		{"id":4,"name":"ratio","required":false,"type":"double"},
		{"id":5,"name":"blob","required":false,"type":"binary"}]}`), 0o600))
	run := func(args ...string) (code int, stdout, stderr string) {
		var out, errOut bytes.Buffer
		code = Main(args, &out, &errOut)
		return code, out.String(), errOut.String()
	}
	code, out, errOut := run("table", "create", "ns.vals", "--admin", n.URL(), "--topic", "vals",
		"--value-format", "json", "--schema", schema)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "created ns.vals")

	cl, err := kgo.NewClient(kgo.SeedBrokers(env.Brokers...), kgo.DefaultProduceTopic("vals"))
	require.NoError(t, err)
	defer cl.Close()
	const rows = 25
	for i := range rows {
		v := fmt.Sprintf(`{"n":%d,"tiny":"0.00000001","price":-12.34,"ratio":0.00000001,"blob":"AAH+/w=="}`, i)
		require.NoError(t, cl.ProduceSync(context.Background(), &kgo.Record{Value: []byte(v)}).FirstErr())
	}
	clustertest.WaitCommitted(t, n.URL(), "ns.vals", map[int32]int64{0: rows}, 30*time.Second)

	// JSON: exact decimal text (as strings), the shortest float text.
	code, out, errOut = run("scan", "ns.vals", "--admin", n.URL(), "--format", "json", "--limit", "1",
		"--columns", "n,tiny,price,ratio,blob")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, `{"n":0,"tiny":"0.00000001","price":"-12.340","ratio":1e-8,"blob":"AAH+/w=="}`+"\n", out)
	require.Equal(t, "mink scan: 1 of 25 rows printed; 24 more rows left out: use --limit 0 for all, or --limit N\n", errOut)

	code, out, _ = run("scan", "ns.vals", "--admin", n.URL(), "--format", "csv", "--limit", "1", "--columns", "tiny,price,ratio,blob")
	require.Equal(t, 0, code)
	require.Equal(t, "tiny,price,ratio,blob\n0.00000001,-12.340,1e-8,AAH+/w==\n", out)

	code, out, _ = run("scan", "ns.vals", "--admin", n.URL(), "--limit", "1", "--columns", "tiny,price,ratio,blob")
	require.Equal(t, 0, code)
	require.Equal(t, []string{"0.00000001", "-12.340", "1e-8", "AAH+/w=="}, strings.Fields(strings.Split(out, "\n")[1]))

	// Without --limit: 20 rows, and the count of the rest on stderr.
	code, out, errOut = run("scan", "ns.vals", "--admin", n.URL(), "--format", "csv", "--columns", "n")
	require.Equal(t, 0, code)
	require.Len(t, strings.Split(strings.TrimSpace(out), "\n"), 1+defaultScanLimit)
	require.Equal(t, "mink scan: 20 of 25 rows printed; 5 more rows left out: use --limit 0 for all, or --limit N\n", errOut)

	for _, limit := range []string{"0", "25", "100"} {
		code, out, errOut = run("scan", "ns.vals", "--admin", n.URL(), "--format", "csv", "--columns", "n", "--limit", limit)
		require.Equal(t, 0, code)
		require.Len(t, strings.Split(strings.TrimSpace(out), "\n"), 1+rows, "--limit %s", limit)
		require.Empty(t, errOut, "--limit %s: nothing left out", limit)
	}
}
