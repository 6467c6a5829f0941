package cli

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// mink status prints, per node, its partition count and the tables it
// writes with their epochs; --leases adds every lease with holder, epoch
// and expiry.
func TestStatusLeases(t *testing.T) {
	exp := time.Now().Add(20*time.Second + 400*time.Millisecond).UTC().Format(time.RFC3339Nano)
	answers := map[string]string{
		"/admin/v1/nodes": fmt.Sprintf(`{"nodes":[{"id":"a","address":"http://a","roles":["indexer","server"],"expires_at":%q},
			{"id":"b","address":"http://b","roles":["server"],"expires_at":%q}]}`, exp, exp),
		"/admin/v1/leases": fmt.Sprintf(`{"leases":[
			{"scope":"1/writer","table":"ns.t","kind":"writer","holder":"a","epoch":3,"expires_at":%q},
			{"scope":"1/partition/0","table":"ns.t","kind":"partition","partition":0,"holder":"a","epoch":2,"expires_at":%q},
			{"scope":"1/partition/1","table":"ns.t","kind":"partition","partition":1,"holder":null,"epoch":5,"expires_at":null}]}`, exp, exp),
		"/admin/v1/tables":                 `{"tables":[{"namespace":"ns","name":"t"}]}`,
		"/admin/v1/tables/ns.t/partitions": `{"partitions":[{"partition":0,"holder":"a","epoch":2,"indexed_offset":900,"committed_offset":850,"high_watermark":1000,"lag":100,"records_per_second":12.5},{"partition":1,"holder":null,"epoch":5}]}`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := answers[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(body))
	}))
	defer srv.Close()

	var out bytes.Buffer
	require.NoError(t, status(context.Background(), []string{"--admin", srv.URL, "--leases"}, &out))
	lines := strings.Split(out.String(), "\n")
	fields := func(i int) []string { return strings.Fields(lines[i]) }
	require.Equal(t, []string{"NODE", "ADDRESS", "ROLES", "EXPIRES", "PARTITIONS", "WRITER", "OF", "(TABLE@EPOCH)"}, fields(0))
	require.Equal(t, []string{"a", "http://a", "indexer,server", "in", "20s", "1", "ns.t@3"}, fields(1))
	require.Equal(t, []string{"b", "http://b", "server", "in", "20s", "0", "-"}, fields(2))
	require.Empty(t, lines[3])
	require.Equal(t, []string{"TABLE", "LEASE", "HOLDER", "EPOCH", "EXPIRES"}, fields(4))
	require.Equal(t, []string{"ns.t", "writer", "a", "3", "in", "20s"}, fields(5))
	require.Equal(t, []string{"ns.t", "partition", "0", "a", "2", "in", "20s"}, fields(6))
	require.Equal(t, []string{"ns.t", "partition", "1", "-", "5", "-"}, fields(7))
	require.Contains(t, out.String(), "ns.t  writer: a (epoch 3, expires in 20s)")
	require.Equal(t, []string{"PARTITION", "HOLDER", "EPOCH", "INDEXED", "COMMITTED", "HIGH", "WATERMARK", "LAG", "RECORDS/S", "(1", "MIN)"}, fields(10))
	require.Equal(t, []string{"0", "a", "2", "900", "850", "1000", "100", "12.5"}, fields(11))

	out.Reset()
	require.NoError(t, status(context.Background(), []string{"--admin", srv.URL}, &out))
	require.NotContains(t, out.String(), "TABLE  LEASE")
}

// mink table status prints the table's progress as mink status does, then
// the count and examples of unknown JSON fields and the dead letters.
func TestTableStatus(t *testing.T) {
	exp := time.Now().Add(9*time.Second + 400*time.Millisecond).UTC().Format(time.RFC3339Nano)
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = append(asked, r.URL.Path)
		if r.URL.Path != "/admin/v1/tables/sap.orders/status" {
			http.Error(w, `{"error":"table not found"}`, http.StatusNotFound)
			return
		}
		fmt.Fprintf(w, `{"table":"sap.orders","writer":{"holder":"a","epoch":3,"expires_at":%q},
			"partitions":[{"partition":0,"holder":"a","epoch":2,"indexed_offset":2,"committed_offset":2,"high_watermark":2,"lag":0,"records_per_second":0.5}],
			"unknown_fields":{"count":2,"examples":["vbeln","aufnr"]},"dead_letters":1}`, exp)
	}))
	defer srv.Close()

	var out bytes.Buffer
	require.NoError(t, tableCmd(context.Background(), []string{"status", "--admin", srv.URL, "sap.orders"}, &out))
	lines := strings.Split(out.String(), "\n")
	require.Equal(t, "sap.orders  writer: a (epoch 3, expires in 9s)", lines[0])
	require.Equal(t, []string{"0", "a", "2", "2", "2", "2", "0", "0.5"}, strings.Fields(lines[2]))
	require.Equal(t, `unknown JSON fields: 2 (e.g. "vbeln", "aufnr")`, lines[3])
	require.Equal(t, `dead letters: 1 (mink scan 'sap.orders~dlq')`, lines[4])

	err := tableCmd(context.Background(), []string{"status", "--admin", srv.URL, "sap.nope"}, &out)
	require.ErrorContains(t, err, "404")
	require.ErrorContains(t, tableCmd(context.Background(), []string{"status", "--admin", srv.URL}, &out), "missing table name NS.NAME")
	require.Equal(t, []string{"/admin/v1/tables/sap.orders/status", "/admin/v1/tables/sap.nope/status"}, asked)
}
