package cli

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// mink status prints the overview: per node its start, expiry, partition
// count and the tables it writes with their epochs, then each table's
// partitions, files, last commit, schema and dead letters, times relative
// to the overview's (database) clock; --leases adds every lease with
// holder, epoch and expiry.
func TestStatusLeases(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	at := func(d time.Duration) string { return now.Add(d).Format(time.RFC3339Nano) }
	exp := at(20*time.Second + 400*time.Millisecond)
	answers := map[string]string{
		"/admin/v1/overview": fmt.Sprintf(`{"time":%q,
			"nodes":[{"id":"a","address":"http://a","roles":["indexer","server"],"started_at":%q,"expires_at":%q,
			          "partition_leases":1,"writer_of":[{"table":"ns.t","epoch":3}]},
			{"id":"b","address":"http://b","roles":["server"],"started_at":%q,"expires_at":%q,"partition_leases":0,"writer_of":[]}],
			"tables":[{"table":"ns.t","topic":"t","writer":{"holder":"a","epoch":3,"expires_at":%q},
			  "partitions":[{"partition":0,"holder":"a","lease_expires_at":%q,"epoch":2,"log_start_offset":7,"indexed_offset":900,"committed_offset":850,"high_watermark":1000,"lag":100,"records_per_second":12.5},
			                {"partition":1,"holder":null,"epoch":5}],
			  "files":{"count":12,"bytes":3145728},
			  "last_commit":{"snapshot_id":77,"sequence_number":4,"operation":"append","committed_at":%q,"writer":"a"},
			  "schema_id":1,"schema_versions":2,"dead_letters":3,"unknown_fields":{"count":0,"examples":[]}}]}`,
			at(0), at(-5*time.Minute), exp, at(-time.Hour), exp, exp, exp, at(-3*time.Second)),
		"/admin/v1/leases": fmt.Sprintf(`{"leases":[
			{"scope":"1/writer","table":"ns.t","kind":"writer","holder":"a","epoch":3,"expires_at":%q},
			{"scope":"1/partition/0","table":"ns.t","kind":"partition","partition":0,"holder":"a","epoch":2,"expires_at":%q},
			{"scope":"1/partition/1","table":"ns.t","kind":"partition","partition":1,"holder":null,"epoch":5,"expires_at":null}]}`, exp, exp),
	}
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = append(asked, r.URL.Path)
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
	require.Equal(t, []string{"NODE", "ADDRESS", "ROLES", "STARTED", "EXPIRES", "PARTITIONS", "WRITER", "OF", "(TABLE@EPOCH)"}, fields(0))
	require.Equal(t, []string{"a", "http://a", "indexer,server", "5m", "00s", "ago", "in", "20s", "1", "ns.t@3"}, fields(1))
	require.Equal(t, []string{"b", "http://b", "server", "1h", "00m", "ago", "in", "20s", "0", "-"}, fields(2))
	require.Empty(t, lines[3])
	require.Equal(t, []string{"TABLE", "LEASE", "HOLDER", "EPOCH", "EXPIRES"}, fields(4))
	require.Equal(t, []string{"ns.t", "writer", "a", "3", "in", "20s"}, fields(5))
	require.Equal(t, []string{"ns.t", "partition", "0", "a", "2", "in", "20s"}, fields(6))
	require.Equal(t, []string{"ns.t", "partition", "1", "-", "5", "-"}, fields(7))
	require.Equal(t, "ns.t  topic: t  writer: a (epoch 3, expires in 20s)", lines[9])
	require.Equal(t, []string{"PARTITION", "HOLDER", "EPOCH", "LEASE", "EXPIRES", "LOG", "START", "INDEXED", "COMMITTED", "HIGH", "WATERMARK", "LAG", "RECORDS/S", "(1", "MIN)"}, fields(10))
	require.Equal(t, []string{"0", "a", "2", "in", "20s", "7", "900", "850", "1000", "100", "12.5"}, fields(11))
	require.Equal(t, []string{"1", "-", "5", "-", "0", "0", "0", "0", "0", "0.0"}, fields(12))
	require.Equal(t, "files: 12, 3.0 MiB (3145728 bytes)", lines[13])
	require.Equal(t, "last commit: snapshot 77 (sequence 4, append by writer a, 3s ago)", lines[14])
	require.Equal(t, "main's history: none yet", lines[15])
	require.Equal(t, "schema: version 1 (2 versions)", lines[16])
	require.Equal(t, "dead letters: 3 (mink scan 'ns.t~dlq')", lines[17])
	require.Equal(t, []string{"/admin/v1/overview", "/admin/v1/leases"}, asked)

	out.Reset()
	asked = nil
	require.NoError(t, status(context.Background(), []string{"--admin", srv.URL}, &out))
	require.NotContains(t, out.String(), "TABLE  LEASE")
	require.Equal(t, []string{"/admin/v1/overview"}, asked)
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
		fmt.Fprintf(w, `{"table":"sap.orders","topic":"orders","writer":{"holder":"a","epoch":3,"expires_at":%q},
			"partitions":[{"partition":0,"holder":"a","epoch":2,"indexed_offset":2,"committed_offset":2,"high_watermark":2,"lag":0,"records_per_second":0.5}],
			"unknown_fields":{"count":2,"examples":["vbeln","aufnr"]},"dead_letters":1}`, exp)
	}))
	defer srv.Close()

	var out bytes.Buffer
	require.NoError(t, tableCmd(context.Background(), []string{"status", "--admin", srv.URL, "sap.orders"}, &out))
	lines := strings.Split(out.String(), "\n")
	require.Equal(t, "sap.orders  topic: orders  writer: a (epoch 3, expires in 9s)", lines[0])
	require.Equal(t, []string{"0", "a", "2", "-", "0", "2", "2", "2", "0", "0.5"}, strings.Fields(lines[2]))
	require.Equal(t, "files: 0, 0 B (0 bytes)", lines[3])
	require.Equal(t, "last commit: none yet", lines[4])
	require.Equal(t, "main's history: none yet", lines[5])
	require.Equal(t, `dead letters: 1 (mink scan 'sap.orders~dlq')`, lines[7])
	require.Equal(t, `unknown JSON fields: 2 (e.g. "vbeln", "aufnr")`, lines[8])

	err := tableCmd(context.Background(), []string{"status", "--admin", srv.URL, "sap.nope"}, &out)
	require.ErrorContains(t, err, "404")
	require.ErrorContains(t, tableCmd(context.Background(), []string{"status", "--admin", srv.URL}, &out), "missing table name NS.NAME")
	require.Equal(t, []string{"/admin/v1/tables/sap.orders/status", "/admin/v1/tables/sap.nope/status"}, asked)
}

// mink table status shows how far back the history reaches (the snapshot
// count, main's oldest snapshot) and each ref besides main with its
// snapshot, time and records, from the admin read model.
func TestTableStatusHistory(t *testing.T) {
	now := time.Now().UTC()
	oldest := now.Add(-90 * time.Minute).Truncate(time.Millisecond)
	tagAt := now.Add(-4 * time.Second).Truncate(time.Millisecond)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"table":"sap.orders","topic":"orders","writer":null,"partitions":[],
			"history":{"snapshots":1234,"oldest_at":%q,"refs":[
			{"name":"group.billing","type":"tag","snapshot_id":77,"timestamp":%q,"records":12345},
			{"name":"group.old","type":"tag","snapshot_id":78,"timestamp":%q,"records":null}]}}`,
			oldest.Format(time.RFC3339Nano), tagAt.Format(time.RFC3339Nano), oldest.Format(time.RFC3339Nano))
	}))
	defer srv.Close()
	var out bytes.Buffer
	require.NoError(t, tableCmd(context.Background(), []string{"status", "--admin", srv.URL, "sap.orders"}, &out))
	lines := strings.Split(out.String(), "\n")
	i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "main's history: ") })
	require.Positive(t, i, out.String())
	require.Equal(t, "main's history: 1,234 snapshots, oldest "+oldest.Format("2006-01-02T15:04:05.000Z")+
		" (1h 30m ago): the earliest mink scan --as-of reaches", lines[i])
	require.Equal(t, "refs besides main (mink scan --ref NAME):", lines[i+1])
	require.Equal(t, []string{"REF", "TYPE", "SNAPSHOT", "TIME", "RECORDS"}, strings.Fields(lines[i+2]))
	require.Equal(t, []string{"group.billing", "tag", "77", tagAt.Format("2006-01-02T15:04:05.000Z"), "(4s", "ago)", "12,345"},
		strings.Fields(lines[i+3]))
	require.Equal(t, "-", strings.Fields(lines[i+4])[7], "records unknown")
	require.True(t, strings.HasPrefix(lines[i+5], "schema: "), lines[i+5])
}

// A tag may have a snapshot while main has none yet: mink table status
// says so and still lists the tag.
func TestTableStatusTagBeforeMain(t *testing.T) {
	now := time.Now().UTC()
	tagAt := now.Add(-4 * time.Second).Truncate(time.Millisecond)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"table":"sap.orders","topic":"orders","writer":null,"partitions":[],
			"history":{"snapshots":0,"oldest_at":null,"refs":[
			{"name":"group.billing","type":"tag","snapshot_id":77,"timestamp":%q,"records":5}]}}`, tagAt.Format(time.RFC3339Nano))
	}))
	defer srv.Close()
	var out bytes.Buffer
	require.NoError(t, tableCmd(context.Background(), []string{"status", "--admin", srv.URL, "sap.orders"}, &out))
	lines := strings.Split(out.String(), "\n")
	i := slices.Index(lines, "main's history: none yet")
	require.Positive(t, i, out.String())
	require.Equal(t, "refs besides main (mink scan --ref NAME):", lines[i+1])
	require.Equal(t, []string{"group.billing", "tag", "77", tagAt.Format("2006-01-02T15:04:05.000Z"), "(4s", "ago)", "5"},
		strings.Fields(lines[i+3]))
	require.True(t, strings.HasPrefix(lines[i+4], "schema: "), lines[i+4])
}

// When Kafka could not be asked for a table's offsets (they come as 0),
// mink table status shows its log start, high watermark and lag as "-".
func TestTableStatusKafkaUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"table":"sap.orders","topic":"orders","writer":null,"kafka_error":"connection refused",
			"partitions":[{"partition":0,"holder":"a","epoch":2,"indexed_offset":7,"committed_offset":5,"high_watermark":0,"lag":0,"records_per_second":0}]}`)
	}))
	defer srv.Close()
	var out bytes.Buffer
	require.NoError(t, tableCmd(context.Background(), []string{"status", "--admin", srv.URL, "sap.orders"}, &out))
	lines := strings.Split(out.String(), "\n")
	require.Equal(t, "  kafka unreachable: connection refused", lines[1])
	require.Equal(t, []string{"0", "a", "2", "-", "-", "7", "5", "-", "-", "0.0"}, strings.Fields(lines[3]))
}

// A 404 of the admin API names the table asked for: its message ("table
// not found") does not.
func TestTableNotFoundNamed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"error":"table not found"}`)
	}))
	defer srv.Close()
	for _, args := range [][]string{
		{"table", "status", "t.nope"}, {"table", "get", "t.nope"}, {"table", "delete", "t.nope"},
		{"table", "properties", "t.nope", "--remove", "mink.group-tags"},
	} {
		var stdout, stderr bytes.Buffer
		require.Equal(t, 1, Main(append(args, "--admin", srv.URL), &stdout, &stderr), "%q", args)
		require.Contains(t, stderr.String(), "table t.nope: 404 Not Found: table not found", "%q", args)
	}
}

// `mink help table` says that table status shows the history and tags.
func TestHelpTableStatus(t *testing.T) {
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, Main([]string{"help", "table"}, &stdout, &stderr))
	require.Contains(t, stdout.String(), "mink table status NS.NAME\n      Progress per partition, files, last commit, history")
	require.Contains(t, stdout.String(), "the tags group.<name>")
}
