package clustertest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/catalog/rest"
	_ "github.com/apache/iceberg-go/io/gocloud/s3" // the S3 file IO the catalog hands out
	"github.com/apache/iceberg-go/table"

	"github.com/minkhq/mink/admin"
	"github.com/minkhq/mink/internal/testkit"
	"github.com/minkhq/mink/internal/testkit/proc"
)

// WaitCommitted waits until every partition of table (ns.name) is
// committed at least up to ends (partition → offset after the last
// record), as GET /admin/v1/tables/{table}/partitions on the node says.
func WaitCommitted(t testing.TB, nodeURL, table string, ends map[int32]int64, timeout time.Duration) {
	t.Helper()
	waitPartitions(t, nodeURL, table, "committed up to "+fmt.Sprint(ends), timeout, func(ps []admin.PartitionStatus) bool {
		got := map[int32]int64{}
		for _, p := range ps {
			got[p.Partition] = p.CommittedOffset
		}
		for p, end := range ends {
			if got[p] < end {
				return false
			}
		}
		return true
	})
}

// CommitTimeout bounds the wait for a table to be committed (WaitCaughtUp,
// WaitExact).
const CommitTimeout = 90 * time.Second

// WaitCaughtUp waits until every partition of table (ns.name) has records
// and is committed up to its high watermark, as the node's admin API says.
func WaitCaughtUp(t testing.TB, nodeURL, table string) {
	t.Helper()
	waitPartitions(t, nodeURL, table, "committed up to the high watermark", CommitTimeout, func(ps []admin.PartitionStatus) bool {
		for _, p := range ps {
			if p.HighWatermark == 0 || p.CommittedOffset < p.HighWatermark {
				return false
			}
		}
		return len(ps) > 0
	})
}

// waitPartitions polls the node's partitions of table every 100 ms until
// done says they are what the test waits for.
func waitPartitions(t testing.TB, nodeURL, table, what string, timeout time.Duration, done func([]admin.PartitionStatus) bool) {
	t.Helper()
	testkit.Eventually(t, timeout, 100*time.Millisecond, table+" "+what, func() (bool, string) {
		ps, err := partitions(nodeURL, table)
		if err != nil {
			return false, err.Error()
		}
		return done(ps), fmt.Sprintf("partitions %+v", ps)
	})
}

// Partitions returns the status of table's (ns.name) partitions that GET
// /admin/v1/tables/{table}/partitions on the node answers.
func Partitions(t testing.TB, nodeURL, table string) []admin.PartitionStatus {
	t.Helper()
	ps, err := partitions(nodeURL, table)
	if err != nil {
		t.Fatalf("clustertest: %v", err)
	}
	return ps
}

func partitions(nodeURL, table string) ([]admin.PartitionStatus, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var body struct {
		Partitions []admin.PartitionStatus `json:"partitions"`
	}
	err := proc.GetJSON(ctx, nodeURL+"/admin/v1/tables/"+table+"/partitions", &body)
	return body.Partitions, err
}

// WaitExact waits until the committed table (ns.name) holds every
// produced record, then reads the whole table with apache/iceberg-go
// through the node's REST catalog and S3 API and asserts that every
// acknowledged record is there exactly once, at its partition and offset,
// with its value bytes, and that no row holds a record that was not
// produced. The table's value column must be raw (binary) or string.
func WaitExact(t testing.TB, nodeURL, tableName string, produced Produced) {
	t.Helper()
	if len(produced.Records) == 0 {
		t.Fatalf("clustertest: nothing was produced")
	}
	WaitCommitted(t, nodeURL, tableName, produced.Ends(), CommitTimeout)
	start := time.Now()
	at := ScanAll(t, nodeURL, tableName)
	diff, unsure := Mismatch(t, at, produced)
	if diff != "" {
		t.Fatalf("clustertest: %s is not exact: %s", tableName, diff)
	}
	t.Logf("clustertest: %s exact: %d records in %d partitions read through %s (%d from failed produces) in %s",
		tableName, len(produced.Records), len(produced.Ends()), nodeURL, unsure, time.Since(start).Round(time.Millisecond))
}

// Mismatch compares the rows of at with produced: every acknowledged
// record exactly once, at its partition and offset, with its value bytes,
// and no row of a record that was not produced (a row of an Unsure value
// is allowed and counted). It returns "" and that count when they match,
// else a summary with the first differences. The table's value column
// must be raw (binary) or string.
func Mismatch(t testing.TB, at arrow.Table, produced Produced) (diff string, unsure int) {
	t.Helper()
	type pk struct {
		p int32
		o int64
	}
	want := make(map[pk][]byte, len(produced.Records))
	for _, r := range produced.Records {
		want[pk{r.Partition, r.Offset}] = r.Value
	}
	seen := make(map[pk]bool, len(want))
	var extra, dup, wrong int
	var firstErr []string
	report := func(format string, args ...any) {
		if len(firstErr) < 10 {
			firstErr = append(firstErr, fmt.Sprintf(format, args...))
		}
	}
	EachRow(t, at, func(p int32, o int64, v []byte) {
		k := pk{p, o}
		if seen[k] {
			dup++
			report("row p%d@%d appears more than once", k.p, k.o)
			return
		}
		seen[k] = true
		w, ok := want[k]
		switch {
		case !ok && produced.Unsure[string(v)]:
			unsure++ // a produce that failed may still have landed
		case !ok:
			extra++
			report("row p%d@%d = %q was not produced", k.p, k.o, v)
		case string(w) != string(v):
			wrong++
			report("row p%d@%d = %q, produced %q", k.p, k.o, v, w)
		}
	})
	var missing int
	for k := range want {
		if !seen[k] {
			missing++
			report("record p%d@%d missing", k.p, k.o)
		}
	}
	if dup+extra+wrong+missing == 0 {
		return "", unsure
	}
	return fmt.Sprintf("%d rows, %d produced: %d missing, %d duplicated, %d not produced, %d wrong values:\n  %s",
		at.NumRows(), len(want), missing, dup, extra, wrong, strings.Join(firstErr, "\n  ")), unsure
}

// EachRow calls f with the Kafka partition, offset and value bytes of each
// row of at, in the table's order. The value column must be raw (binary)
// or string.
func EachRow(t testing.TB, at arrow.Table, f func(partition int32, offset int64, value []byte)) {
	t.Helper()
	parts, offsets, values := Column(t, at, "_kafka", "partition"), Column(t, at, "_kafka", "offset"), Column(t, at, "value")
	for c := range parts {
		for i := 0; i < parts[c].Len(); i++ {
			f(parts[c].(*array.Int32).Value(i), offsets[c].(*array.Int64).Value(i), valueAt(t, values[c], i))
		}
	}
}

func valueAt(t testing.TB, a arrow.Array, i int) []byte {
	switch v := a.(type) {
	case *array.Binary:
		return v.Value(i)
	case *array.String:
		return []byte(v.Value(i))
	case *array.LargeBinary:
		return v.Value(i)
	case *array.LargeString:
		return []byte(v.Value(i))
	}
	t.Fatalf("clustertest: value column of type %s", a.DataType())
	return nil
}

// ScanAll loads table (ns.name) through the node's REST catalog and reads
// every row through the S3 API the catalog hands out. The result is
// released when the test ends.
func ScanAll(t testing.TB, nodeURL, tableName string) arrow.Table {
	t.Helper()
	at, err := TryScan(nodeURL, tableName)
	if err != nil {
		t.Fatalf("clustertest: %v", err)
	}
	t.Cleanup(at.Release)
	return at
}

// TryScan is ScanAll that returns its error; the caller releases the
// table.
func TryScan(nodeURL, tableName string) (arrow.Table, error) {
	ns, name, ok := strings.Cut(tableName, ".")
	if !ok {
		return nil, fmt.Errorf("table %q is not ns.name", tableName)
	}
	// A bound on a whole-table read, not a performance assertion: a long
	// soak leaves thousands of small files, each built from Kafka on first
	// read.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cat, err := rest.NewCatalog(ctx, "mink", nodeURL)
	if err != nil {
		return nil, fmt.Errorf("catalog at %s: %w", nodeURL, err)
	}
	tbl, err := cat.LoadTable(ctx, table.Identifier{ns, name})
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", tableName, err)
	}
	at, err := tbl.Scan().ToArrowTable(ctx)
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", tableName, err)
	}
	return at, nil
}

// Column returns the chunks of a top-level column, or of a field of a
// struct column when path has two elements.
func Column(t testing.TB, at arrow.Table, path ...string) []arrow.Array {
	t.Helper()
	idx := at.Schema().FieldIndices(path[0])
	if len(idx) != 1 {
		t.Fatalf("clustertest: column %s: %d matches", path[0], len(idx))
	}
	var out []arrow.Array
	for _, chunk := range at.Column(idx[0]).Data().Chunks() {
		arr := chunk
		for _, p := range path[1:] {
			st := arr.(*array.Struct)
			i, ok := st.DataType().(*arrow.StructType).FieldIdx(p)
			if !ok {
				t.Fatalf("clustertest: no field %s in %s", p, path[0])
			}
			arr = st.Field(i)
		}
		out = append(out, arr)
	}
	return out
}
