package e2e

import (
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/cluster"
	"github.com/minkhq/mink/internal/clustertest"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/tables"
)

// TestDeletedTableNotServed: once DELETE /admin/v1/tables/… answers, no
// node serves the table's data or metadata files, although both server
// nodes cached them (a reader holding their keys, or credentials vended
// before the delete, read them until they expired). Each answers 404
// NoSuchKey at once.
func TestDeletedTableNotServed(t *testing.T) {
	ctx := context.Background()
	env := clustertest.New(t)
	a := env.StartNode(clustertest.NodeOptions{ID: "a", Roles: []string{cluster.RoleServer, cluster.RoleIndexer}})
	b := env.StartNode(clustertest.NodeOptions{ID: "b", Roles: []string{cluster.RoleServer}})
	env.CreateTopic("gone", 1)
	cl, err := kgo.NewClient(kgo.SeedBrokers(env.Brokers...))
	require.NoError(t, err)
	defer cl.Close()
	var recs []*kgo.Record
	for i := range 10 {
		recs = append(recs, &kgo.Record{Topic: "gone", Value: []byte(fmt.Sprintf("v-%02d", i))})
	}
	res := cl.ProduceSync(ctx, recs...)
	require.NoError(t, res.FirstErr())
	p := clustertest.Produced{Topic: "gone"}
	for _, r := range res {
		p.Records = append(p.Records, clustertest.Record{Partition: r.Record.Partition, Offset: r.Record.Offset, Value: r.Record.Value})
	}
	env.CreateTable(a.URL(), map[string]any{"namespace": "dt", "name": "t", "topic": "gone", "value_format": "raw"})
	clustertest.WaitExact(t, a.URL(), "dt.t", p)

	keys := testkit.Column[string](t, env.Pool(), `SELECT d.path FROM data_files d JOIN tables t ON t.id = d.table_id
		WHERE t.namespace = 'dt' AND t.name = 't'`)
	require.NotEmpty(t, keys)
	meta := testkit.Column[string](t, env.Pool(), `SELECT metadata_location FROM tables WHERE namespace = 'dt' AND name = 't'`)
	keys = append(keys, tables.Key(meta[0]))
	get := func(n *clustertest.Node, key string) (int, string) {
		resp, err := http.Get(n.URL() + "/mink/" + key)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		var e struct{ Code string }
		_ = xml.Unmarshal(body, &e)
		return resp.StatusCode, e.Code
	}
	for _, k := range keys {
		for _, n := range []*clustertest.Node{a, b} {
			st, _ := get(n, k)
			require.Equal(t, http.StatusOK, st, k)
			st, _ = get(n, k) // now cached on the node
			require.Equal(t, http.StatusOK, st, k)
		}
	}

	req, err := http.NewRequest(http.MethodDelete, b.URL()+"/admin/v1/tables/dt.t", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNoContent, resp.StatusCode)

	for _, k := range keys {
		for _, n := range []*clustertest.Node{a, b} {
			st, code := get(n, k)
			require.Equal(t, http.StatusNotFound, st, "%s on %s", k, n.URL())
			require.Equal(t, "NoSuchKey", code)
		}
	}
}
