package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/minkhq/mink/admin"
	"github.com/minkhq/mink/auth"
	"github.com/minkhq/mink/cluster"
	"github.com/minkhq/mink/internal/clustertest"
	"github.com/minkhq/mink/internal/pgtest"
	"github.com/minkhq/mink/internal/testca"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/node"
	"github.com/minkhq/mink/objects"
	"github.com/minkhq/mink/tables"
)

// TestHTTPS: two nodes serve HTTPS with certificates of a test CA
// (--tls-cert, --tls-key, --tls-ca). iceberg-go reads a table through the
// REST catalog and the S3 API over https, trusting that CA; a data file
// read on the node that does not own it is forwarded to its owner over
// https and served; the admin API forwards to a named node over https; a
// read marked forwarded that no node signed is refused.
func TestHTTPS(t *testing.T) {
	ctx := context.Background()
	ca := testca.New(t)
	const partitions, perPartition = 4, 50
	k := testkit.NewKafka(t, kfake.SeedTopics(partitions, "events"))
	pg := pgtest.Schema(t)
	start := func(id string) *node.Node {
		cert, key := ca.Issue(t, id, id, "127.0.0.1")
		n, err := node.Start(ctx, node.Config{PostgresURL: pg, KafkaBrokers: k.Cluster.ListenAddrs(), Listen: "127.0.0.1:0",
			NodeID: id, LeaseTTL: 3 * time.Second, FlushInterval: 200 * time.Millisecond, CommitInterval: 200 * time.Millisecond,
			CacheDir: t.TempDir(), TLSCert: cert, TLSKey: key, TLSCA: ca.File, Auth: auth.ModeNone, Logger: slog.New(slog.DiscardHandler)})
		require.NoError(t, err)
		t.Cleanup(n.Stop)
		require.True(t, strings.HasPrefix(n.URL(), "https://127.0.0.1:"), n.URL())
		return n
	}
	a, b := start("a"), start("b")
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: ca.ClientTLS()}}
	defer client.CloseIdleConnections()
	do := func(method, url string, body []byte, hdr http.Header) (*http.Response, []byte) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
		require.NoError(t, err)
		for k, v := range hdr {
			req.Header[k] = v
		}
		return testkit.SendWith(t, client, req)
	}

	// Plain http to the https listener gets no answer of the API.
	resp, err := http.Get(strings.Replace(a.URL(), "https://", "http://", 1) + "/healthz")
	if err == nil {
		resp.Body.Close()
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, "Go's answer to http on a TLS port")
	}

	def, _ := json.Marshal(map[string]any{"namespace": "tls", "name": "events", "topic": "events", "value_format": "raw"})
	resp, body := do(http.MethodPost, a.URL()+"/admin/v1/tables", def, nil)
	require.Equal(t, http.StatusCreated, resp.StatusCode, "%s", body)
	want := map[[2]int64]string{}
	for p := range int32(partitions) {
		values := make([]string, perPartition)
		for i := range values {
			values[i] = fmt.Sprintf("p%d-v%d", p, i)
			want[[2]int64{int64(p), int64(i)}] = values[i]
		}
		k.Produce(t, "events", p, values...)
	}
	testkit.Eventually(t, clustertest.CommitTimeout, 100*time.Millisecond, "tls.events committed, both nodes members", func() (bool, string) {
		resp, body := do(http.MethodGet, b.URL()+"/admin/v1/tables/tls.events/partitions", nil, nil)
		var ps admin.TablePartitions
		if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &ps) != nil {
			return false, string(body)
		}
		for _, p := range ps.Partitions {
			if p.CommittedOffset < perPartition {
				return false, string(body)
			}
		}
		_, nodes := do(http.MethodGet, b.URL()+"/admin/v1/nodes", nil, nil)
		return len(ps.Partitions) == partitions && bytes.Count(nodes, []byte(`"id"`)) == 2, string(body)
	})

	// iceberg-go over https: the catalog with the CA, the S3 client (the
	// endpoint the catalog hands out is the node's https URL) with the
	// AWS SDK's own setting of a CA bundle.
	t.Setenv("AWS_CA_BUNDLE", ca.File)
	cat, err := rest.NewCatalog(ctx, "mink", b.URL(), rest.WithTLSConfig(ca.ClientTLS()))
	require.NoError(t, err)
	tbl, err := cat.LoadTable(ctx, table.Identifier{"tls", "events"})
	require.NoError(t, err)
	at, err := tbl.Scan().ToArrowTable(ctx)
	require.NoError(t, err)
	defer at.Release()
	got := map[[2]int64]string{}
	clustertest.EachRow(t, at, func(p int32, off int64, v []byte) { got[[2]int64{int64(p), off}] = string(v) })
	require.Equal(t, want, got)

	// Every data file read on the node that does not own it: forwarded to
	// the owner over https, the same bytes as the owner serves.
	tasks, err := tbl.Scan().PlanFiles(ctx)
	require.NoError(t, err)
	members := []cluster.Member{{ID: "a", Roles: []string{cluster.RoleServer}}, {ID: "b", Roles: []string{cluster.RoleServer}}}
	nodes := map[string]*node.Node{"a": a, "b": b}
	stats := func(via *node.Node, id string) objects.Stats {
		t.Helper()
		// Asked of one node about the other: the admin API forwards it.
		resp, body := do(http.MethodGet, via.URL()+"/admin/v1/nodes/"+id+"/cache", nil, nil)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
		var st objects.Stats
		require.NoError(t, json.Unmarshal(body, &st))
		return st
	}
	before := map[string]objects.Stats{"a": stats(b, "a"), "b": stats(a, "b")}
	forwarded := map[string]uint64{}
	for _, task := range tasks {
		key := tables.Key(task.File.FilePath())
		owner, ok := cluster.Owner(members, key)
		require.True(t, ok)
		other := "a"
		if owner.ID == "a" {
			other = "b"
		}
		resp, fromOther := do(http.MethodGet, nodes[other].URL()+"/mink/"+key, nil, nil)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s on %s: %s", key, other, fromOther)
		require.EqualValues(t, task.File.FileSizeBytes(), len(fromOther))
		resp, fromOwner := do(http.MethodGet, nodes[owner.ID].URL()+"/mink/"+key, nil, nil)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Equal(t, fromOwner, fromOther, "%s", key)
		forwarded[other]++
	}
	require.NotEmpty(t, tasks)
	t.Logf("%d data files; reads forwarded over https by node: %v", len(tasks), forwarded)
	for id, n := range forwarded {
		st := stats(nodes[id], id)
		require.Equal(t, before[id].Forwards+n, st.Forwards, "node %s forwarded each read of a file it does not own", id)
		require.Zero(t, st.ForwardFailures, "node %s: every forward over https answered", id)
	}

	// Marked forwarded but not signed by a node: refused, over https too.
	key := tables.Key(tasks[0].File.FilePath())
	resp, body = do(http.MethodGet, a.URL()+"/mink/"+key, nil, http.Header{auth.ForwardedHeader: {"b"}})
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	require.Contains(t, string(body), "<Code>AccessDenied</Code>")
	resp, body = do(http.MethodGet, a.URL()+"/admin/v1/nodes/a/cache", nil, http.Header{auth.ForwardedHeader: {"b"}})
	require.Equal(t, http.StatusForbidden, resp.StatusCode, "%s", body)
}
