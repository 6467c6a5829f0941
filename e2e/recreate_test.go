package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/cluster"
	"github.com/minkhq/mink/internal/clustertest"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/tables"
)

// TestRecreatedTableReadsItsOwnFiles: a table deleted and created again
// under the same name (the "fix the definition and start over" workflow)
// reads its own records, never the deleted table's, although the node
// serving them cached the deleted table's data file, whose key the new
// one's would be without the rule of docs/design.md §4.1 (a location is
// never given out twice, so a key names one table's bytes for good).
// Without it, the second read returned "old-00" where "new-00" was
// produced. Values of equal length make the two files the same size: a
// stale copy would be served silently.
func TestRecreatedTableReadsItsOwnFiles(t *testing.T) {
	ctx := context.Background()
	env := clustertest.New(t)
	// The server caches the files it serves; the indexer, on another node,
	// builds the new table's file without replacing the server's copy.
	n := env.StartNode(clustertest.NodeOptions{ID: "srv", Roles: []string{cluster.RoleServer}})
	env.StartNode(clustertest.NodeOptions{ID: "ix", Roles: []string{cluster.RoleIndexer}})
	cl, err := kgo.NewClient(kgo.SeedBrokers(env.Brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer cl.Close()
	produce := func(topic, prefix string) clustertest.Produced {
		env.CreateTopic(topic, 1)
		var recs []*kgo.Record
		for i := range 20 {
			recs = append(recs, &kgo.Record{Topic: topic, Value: []byte(fmt.Sprintf("%s-%02d", prefix, i))})
		}
		res := cl.ProduceSync(ctx, recs...)
		require.NoError(t, res.FirstErr())
		p := clustertest.Produced{Topic: topic}
		for _, r := range res {
			p.Records = append(p.Records, clustertest.Record{Partition: r.Record.Partition, Offset: r.Record.Offset, Value: r.Record.Value})
		}
		return p
	}
	keys := func() []string {
		return testkit.Column[string](t, env.Pool(), `SELECT d.path FROM data_files d JOIN tables t ON t.id = d.table_id
			WHERE t.namespace = 'rc' AND t.name = 't' ORDER BY 1`)
	}
	drop := func() {
		req, err := http.NewRequest(http.MethodDelete, n.URL()+"/admin/v1/tables/rc.t", nil)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusNoContent, resp.StatusCode)
	}
	create := func(topic string) string {
		env.CreateTable(n.URL(), map[string]any{"namespace": "rc", "name": "t", "topic": topic, "value_format": "raw"})
		return testkit.Column[string](t, env.Pool(), `SELECT location FROM tables WHERE namespace = 'rc' AND name = 't'`)[0]
	}

	// The first table: its file is read through the node, which caches it.
	old := produce("old", "old")
	oldLoc := create("old")
	require.Equal(t, "s3://mink/rc/t", oldLoc)
	clustertest.WaitExact(t, n.URL(), "rc.t", old)
	oldKeys := keys()
	require.NotEmpty(t, oldKeys)

	drop()

	// The same name over another topic with as many records.
	fresh := produce("new", "new")
	newLoc := create("new")
	require.True(t, strings.HasPrefix(newLoc, "s3://mink/rc/t-"), newLoc)
	require.Len(t, newLoc, len("s3://mink/rc/t-")+32, "the table's uuid in hex")
	clustertest.WaitExact(t, n.URL(), "rc.t", fresh)
	newKeys := keys()
	require.Len(t, newKeys, len(oldKeys))
	for i := range newKeys {
		require.Equal(t, strings.TrimPrefix(oldKeys[i], tables.Key(oldLoc)), strings.TrimPrefix(newKeys[i], tables.Key(newLoc)),
			"the same offsets, so the same file name below the table")
		require.NotEqual(t, oldKeys[i], newKeys[i])
	}

	// Deleted and created a third time: a location of its own again.
	drop()
	third := create("old")
	require.NotContains(t, []string{oldLoc, newLoc}, third)
	clustertest.WaitExact(t, n.URL(), "rc.t", old)
}
