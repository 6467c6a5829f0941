package cli

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minkhq/mink/admin"
	"github.com/minkhq/mink/internal/clustertest"
)

// TestScanTimeTravel: `mink scan` reads an older snapshot by id, by ref
// (a consumer group's tag) and by time (the snapshot-log, as FOR
// TIMESTAMP AS OF), against a real node: 10 records committed, then 10
// more, then group billing commits offset 5. Each selector prints exactly
// the offsets of its snapshot; an unknown id or ref, a time before the
// oldest snapshot and two selectors at once are errors that say why.
func TestScanTimeTravel(t *testing.T) {
	ctx := context.Background()
	env := clustertest.New(t)
	n := env.StartNode(clustertest.NodeOptions{})
	env.CreateTopic("tt", 1)
	run := func(args ...string) (code int, stdout, stderr string) {
		var out, errOut bytes.Buffer
		code = Main(args, &out, &errOut)
		return code, out.String(), errOut.String()
	}
	code, _, errOut := run("table", "create", "ns.tt", "--admin", n.URL(), "--topic", "tt", "--value-format", "raw",
		"--property", "mink.group-tags=billing")
	require.Equal(t, 0, code, errOut)

	cl, err := kgo.NewClient(kgo.SeedBrokers(env.Brokers...), kgo.DefaultProduceTopic("tt"))
	require.NoError(t, err)
	defer cl.Close()
	produce := func(from, to int) {
		for i := from; i < to; i++ {
			require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Value: fmt.Appendf(nil, "v%d", i)}).FirstErr())
		}
	}
	cat, err := rest.NewCatalog(ctx, "mink", n.URL())
	require.NoError(t, err)
	load := func() *table.Table {
		tbl, err := cat.LoadTable(ctx, table.Identifier{"ns", "tt"})
		require.NoError(t, err)
		return tbl
	}

	produce(0, 10)
	clustertest.WaitCommitted(t, n.URL(), "ns.tt", map[int32]int64{0: 10}, 30*time.Second)
	first := load().CurrentSnapshot()
	require.NotNil(t, first)
	produce(10, 20)
	clustertest.WaitCommitted(t, n.URL(), "ns.tt", map[int32]int64{0: 20}, 30*time.Second)
	offs := kadm.Offsets{}
	offs.AddOffset("tt", 0, 5, -1)
	resp, err := kadm.NewClient(cl).CommitOffsets(ctx, "billing", offs)
	require.NoError(t, err)
	require.NoError(t, resp.Error())
	var tag *table.Snapshot
	require.Eventually(t, func() bool {
		tag = load().Metadata().SnapshotByName("group.billing")
		return tag != nil
	}, 20*time.Second, 100*time.Millisecond, "tag group.billing")

	// offsets scans with the given selector and returns the offsets it
	// printed, sorted, and its stderr.
	offsets := func(args ...string) ([]int64, string) {
		t.Helper()
		code, out, errOut := run(append([]string{"scan", "ns.tt", "--admin", n.URL(), "--format", "csv",
			"--columns", "_kafka.offset", "--limit", "0"}, args...)...)
		require.Equal(t, 0, code, errOut)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		require.Equal(t, "_kafka.offset", lines[0])
		var got []int64
		for _, l := range lines[1:] {
			o, err := strconv.ParseInt(l, 10, 64)
			require.NoError(t, err)
			got = append(got, o)
		}
		slices.Sort(got)
		return got, errOut
	}
	upTo := func(end int64) []int64 {
		var o []int64
		for i := range end {
			o = append(o, i)
		}
		return o
	}
	got, errOut := offsets()
	require.Equal(t, upTo(20), got, "the current snapshot")
	require.Empty(t, errOut)

	got, errOut = offsets("--snapshot-id", strconv.FormatInt(first.SnapshotID, 10))
	require.Equal(t, upTo(10), got, "the snapshot of the first 10 records")
	require.Equal(t, fmt.Sprintf("mink scan: reading snapshot %d of %s\n", first.SnapshotID, msText(first.TimestampMs)), errOut)

	got, errOut = offsets("--ref", "group.billing")
	require.Equal(t, upTo(5), got, "the tag: what billing processed")
	require.Contains(t, errOut, fmt.Sprintf("reading snapshot %d ", tag.SnapshotID))

	// The time of the first snapshot, and a millisecond before the next
	// one of main, both pick it; in either form.
	var next int64
	for e := range load().Metadata().SnapshotLogs() {
		if e.TimestampMs > first.TimestampMs && (next == 0 || e.TimestampMs < next) {
			next = e.TimestampMs
		}
	}
	require.NotZero(t, next, "a later snapshot of main")
	for _, at := range []string{strconv.FormatInt(first.TimestampMs, 10), strconv.FormatInt(next-1, 10),
		time.UnixMilli(next - 1).In(time.FixedZone("", 2*3600)).Format(time.RFC3339Nano)} {
		got, errOut = offsets("--as-of", at)
		require.Equal(t, upTo(10), got, "--as-of %s", at)
		require.Contains(t, errOut, fmt.Sprintf("reading snapshot %d ", first.SnapshotID), "--as-of %s", at)
	}
	got, _ = offsets("--as-of", time.Now().Add(time.Hour).Format(time.RFC3339))
	require.Equal(t, upTo(20), got, "a time past the last commit: the current snapshot")

	// Errors: what the table has instead.
	code, _, errOut = run("scan", "ns.tt", "--admin", n.URL(), "--as-of", "2000-01-01T00:00:00Z")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "mink scan: scan ns.tt: no such snapshot: no snapshot at or before 2000-01-01T00:00:00.000Z; main's history: ")
	require.Contains(t, errOut, " snapshots, the oldest from ")
	require.Contains(t, errOut, "; refs besides main: group.billing\n")
	code, _, errOut = run("scan", "ns.tt", "--admin", n.URL(), "--ref", "group.nobody")
	require.Equal(t, 1, code)
	require.Equal(t, "mink scan: scan ns.tt: no such snapshot: no ref \"group.nobody\" in the table (its refs: group.billing, main)\n", errOut)
	code, _, errOut = run("scan", "ns.tt", "--admin", n.URL(), "--snapshot-id", "42")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "snapshot 42 is not in the table's metadata")

	for _, args := range [][]string{{"--ref", "main", "--as-of", "0"}, {"--snapshot-id", "1", "--ref", "main"}} {
		code, _, errOut = run(append([]string{"scan", "ns.tt", "--admin", n.URL()}, args...)...)
		require.Equal(t, 2, code, args)
		require.Contains(t, errOut, "give at most one of --snapshot-id, --ref and --as-of", args)
	}
	code, _, errOut = run("scan", "ns.tt", "--as-of", "yesterday")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `--as-of must be an RFC 3339 time (2026-01-02T15:04:05Z) or Unix milliseconds, not "yesterday"`)
	code, _, errOut = run("scan", "ns.tt", "--snapshot-id", "abc")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `--snapshot-id must be a snapshot id`)

	// mink table status and the overview show the history as the
	// metadata has it: its snapshot count, main's oldest snapshot-log
	// entry, the tag's snapshot, time and records.
	var want, got2 admin.HistoryStatus
	require.Eventually(t, func() bool {
		md := load().Metadata()
		// Main's history only, as the --as-of error counts it: the
		// tag's snapshot is a ref.
		want = admin.HistoryStatus{}
		for e := range md.SnapshotLogs() {
			want.Snapshots++
			if at := time.UnixMilli(e.TimestampMs).UTC(); want.OldestAt == nil || at.Before(*want.OldestAt) {
				want.OldestAt = &at
			}
		}
		for name, ref := range md.Refs() {
			if name != table.MainBranch {
				s := md.SnapshotByID(ref.SnapshotID)
				recs := s.Summary.Properties.GetInt64("total-records", -1)
				want.Refs = append(want.Refs, admin.RefStatus{Name: name, Type: string(ref.SnapshotRefType), SnapshotID: s.SnapshotID,
					Timestamp: time.UnixMilli(s.TimestampMs).UTC(), Records: &recs})
			}
		}
		st, err := (&admin.Client{URL: n.URL()}).Overview(ctx, "ns.tt")
		require.NoError(t, err)
		got2 = st.Tables[0].History
		return reflect.DeepEqual(want, got2)
	}, 10*time.Second, 200*time.Millisecond, "history of the overview as the metadata's")
	require.Len(t, got2.Refs, 1)
	require.Equal(t, int64(5), *got2.Refs[0].Records)
	require.Equal(t, tag.SnapshotID, got2.Refs[0].SnapshotID)

	code, out, errOut := run("table", "status", "ns.tt", "--admin", n.URL())
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, fmt.Sprintf("\nmain's history: %d snapshots, oldest %s (", got2.Snapshots, msText(got2.OldestAt.UnixMilli())))
	require.Contains(t, out, "\nrefs besides main (mink scan --ref NAME):\n")
	var refLine []string
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == "group.billing" {
			refLine = f
		}
	}
	require.Equal(t, []string{"group.billing", "tag", strconv.FormatInt(tag.SnapshotID, 10), msText(tag.TimestampMs)}, refLine[:4])
	require.Equal(t, "5", refLine[len(refLine)-1])
}

// The selectors read no MINK_* variable: a stray MINK_REF must not turn
// every scan into a read of the past.
func TestScanSelectorsCommandLineOnly(t *testing.T) {
	t.Setenv("MINK_REF", "group.billing")
	t.Setenv("MINK_AS_OF", "0")
	t.Setenv("MINK_SNAPSHOT_ID", "7")
	req, err := parseScan([]string{"ns.t"})
	require.NoError(t, err)
	require.Equal(t, snapshotSelector{}, req.snapshot)
	req, err = parseScan([]string{"ns.t", "--as-of", "2026-01-02T15:04:05.0079+01:00"})
	require.NoError(t, err)
	require.Equal(t, time.Date(2026, 1, 2, 14, 4, 5, 7e6, time.UTC).UnixMilli(), *req.snapshot.asOf)
}

// An empty selector is a flag error, not the current snapshot: a script's
// `--as-of "$T"` with T unset must not silently read current data.
func TestScanSelectorsEmptyValue(t *testing.T) {
	for _, args := range [][]string{
		{"scan", "ns.t", "--as-of="},
		{"scan", "ns.t", "--as-of", ""},
		{"scan", "ns.t", "--ref="},
		{"scan", "ns.t", "--snapshot-id="},
		{"scan", "ns.t", "--ref=group.a", "--as-of="},
	} {
		var stdout, stderr bytes.Buffer
		require.Equal(t, 2, Main(args, &stdout, &stderr), "%q", args)
		require.Contains(t, stderr.String(), "needs a value, not an empty string", "%q", args)
		require.Empty(t, stdout.String())
	}
	_, err := parseScan([]string{"ns.t", "--ref=", "--as-of=5"})
	require.ErrorContains(t, err, "--ref needs a value")
	_, err = parseScan([]string{"ns.t", "--ref=a", "--as-of=5"})
	require.ErrorContains(t, err, "at most one of")
	// The same for --columns: an empty list is no read of every column.
	for _, v := range []string{"--columns=", "--columns= , "} {
		var stdout, stderr bytes.Buffer
		require.Equal(t, 2, Main([]string{"scan", "ns.t", v}, &stdout, &stderr), v)
		require.Contains(t, stderr.String(), "--columns needs at least one column name", v)
	}
	q, err := parseScan([]string{"ns.t", "--columns", "a, b"})
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b"}, q.columns)
}

// A table whose only snapshot is a tag's (main has none yet): --ref reads
// the tag, --snapshot-id finds its snapshot among all of them, and the
// errors say main has none but name the tag, not "no snapshot yet".
func TestScanSelectorTagBeforeMain(t *testing.T) {
	md, err := table.ParseMetadataString(`{"format-version":2,"table-uuid":"9c12d441-03fe-4693-9a96-a0705ddf69c1",
		"location":"s3://b/ns/t","last-sequence-number":1,"last-updated-ms":1767366245000,"last-column-id":1,
		"schemas":[{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"v","required":false,"type":"string"}]}],
		"current-schema-id":0,"partition-specs":[{"spec-id":0,"fields":[]}],"default-spec-id":0,"last-partition-id":999,
		"sort-orders":[{"order-id":0,"fields":[]}],"default-sort-order-id":0,"properties":{},
		"snapshots":[{"snapshot-id":42,"sequence-number":1,"timestamp-ms":1767366245000,"manifest-list":"s3://b/m.avro",
			"summary":{"operation":"append"},"schema-id":0}],
		"refs":{"group.billing":{"snapshot-id":42,"type":"tag"}},"snapshot-log":[],"metadata-log":[]}`)
	require.NoError(t, err)
	tbl := table.New(table.Identifier{"ns", "t"}, md, "s3://b/ns/t/metadata/1.json", nil, nil)
	require.Nil(t, tbl.CurrentSnapshot(), "main has no snapshot")

	id := int64(42)
	s, err := snapshotSelector{snapshotID: &id}.pick(tbl)
	require.NoError(t, err)
	require.Equal(t, int64(42), s.SnapshotID)
	s, err = snapshotSelector{ref: "group.billing"}.pick(tbl)
	require.NoError(t, err)
	require.Equal(t, int64(42), s.SnapshotID)

	id = 7
	_, err = snapshotSelector{snapshotID: &id}.pick(tbl)
	require.EqualError(t, err, "no such snapshot: snapshot 7 is not in the table's metadata (expired, or never one of this table)"+
		"; main's history: none yet; refs besides main: group.billing")
	at := int64(1767366245000)
	_, err = snapshotSelector{asOf: &at}.pick(tbl)
	require.ErrorContains(t, err, "; main's history: none yet; refs besides main: group.billing")
	require.NotContains(t, err.Error(), "no snapshot yet")
}
