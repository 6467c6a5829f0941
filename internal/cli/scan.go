package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go/catalog/rest"
	_ "github.com/apache/iceberg-go/io/gocloud/s3" // s3:// file IO for scans
	"github.com/apache/iceberg-go/table"
)

// defaultScanLimit is the rows `mink scan` prints without --limit.
const defaultScanLimit = 20

// scanRequest is what `mink scan` was asked for.
type scanRequest struct {
	// catalog is the URL of the Iceberg REST catalog: any node (--admin);
	// credential the principal's CLIENT_ID:SECRET (--credential), empty
	// for a node under auth none.
	catalog    string
	credential string
	name       string // "<namespace>.<table>", as given
	namespace  string
	table      string
	// limit is the rows to print; 0 prints all.
	limit   int64
	format  string // table, json or csv
	columns []string
	// snapshot is the snapshot to read (--snapshot-id, --ref, --as-of);
	// the zero selector reads the current one.
	snapshot snapshotSelector
}

// scan runs `mink scan`: it loads the table through the node's Iceberg
// REST catalog, reads it as an engine would (iceberg-go, the S3 API) and
// prints its rows (printer).
func scan(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	req, err := parseScan(args)
	if err != nil {
		return err
	}
	return req.run(ctx, stdout, stderr)
}

// parseScan reads the command line of `mink scan`.
func parseScan(args []string) (*scanRequest, error) {
	fs := flag.NewFlagSet("scan", flag.ContinueOnError)
	admin := adminFlag(fs, anyCredential)
	limit := fs.Int64("limit", defaultScanLimit, "rows to print (0 = all)")
	format := fs.String("format", "table", "table, json or csv")
	var columns listFlag
	fs.Var(&columns, "columns", "columns to read, e.g. id,properties.mag,_kafka.offset (default all)")
	selector := selectorFlags(fs)
	var name string
	if err := parse(fs, args, &name); err != nil {
		return nil, err
	}
	if *limit < 0 {
		return nil, usagef("--limit must be 0 (all rows) or more, not %d", *limit)
	}
	switch *format {
	case "table", "json", "csv":
	default:
		return nil, usagef("unknown --format %q (table, json or csv)", *format)
	}
	// `--columns "$C"` with C unset names no column: an error, not a read
	// of every column.
	var noColumns bool
	fs.Visit(func(f *flag.Flag) { noColumns = noColumns || (f.Name == "columns" && len(columns) == 0) })
	if noColumns {
		return nil, usagef("--columns needs at least one column name (leave the flag out to read every column)")
	}
	sel, err := selector()
	if err != nil {
		return nil, err
	}
	ns, tname, err := splitTableName(name)
	if err != nil {
		return nil, err
	}
	return &scanRequest{catalog: admin.url, credential: admin.cred(), name: name, namespace: ns, table: tname,
		limit: *limit, format: *format, columns: columns, snapshot: sel}, nil
}

// splitTableName splits "NS.NAME" at its last dot (NS may have several
// levels), or returns a usage error.
func splitTableName(name string) (ns, table string, err error) {
	if name == "" {
		return "", "", usagef("missing table name NS.NAME")
	}
	i := strings.LastIndexByte(name, '.')
	if i <= 0 || i == len(name)-1 {
		return "", "", usagef("table name %q must be NS.NAME", name)
	}
	if slices.Contains(strings.Split(name[:i], "."), "") {
		// The catalog would refuse it too (a 400), after a round trip.
		return "", "", usagef("table name %q has an empty namespace level", name)
	}
	return name[:i], name[i+1:], nil
}

func (q *scanRequest) run(ctx context.Context, stdout, stderr io.Writer) error {
	var copts []rest.Option
	if q.credential != "" {
		// OAuth2 client credentials through the node's POST /v1/oauth/tokens.
		copts = append(copts, rest.WithCredential(q.credential))
	}
	cat, err := rest.NewCatalog(ctx, "mink", q.catalog, copts...)
	if err != nil {
		return fmt.Errorf("catalog %s: %w", q.catalog, err)
	}
	tbl, err := cat.LoadTable(ctx, table.Identifier{q.namespace, q.table})
	if err != nil {
		return fmt.Errorf("load %s: %w", q.name, err)
	}
	var opts []table.ScanOption
	snap, err := q.snapshot.pick(tbl)
	if err != nil {
		return fmt.Errorf("scan %s: %w", q.name, err)
	}
	if snap != nil {
		opts = append(opts, table.WithSnapshotID(snap.SnapshotID))
		// Which snapshot --as-of picked is not evident: say it (stderr,
		// so that the rows stay what --format promises).
		fmt.Fprintf(stderr, "mink scan: reading snapshot %d of %s\n", snap.SnapshotID, msText(snap.TimestampMs))
	}
	if len(q.columns) > 0 {
		opts = append(opts, table.WithSelectedFields(q.columns...))
	}
	all := tbl.Scan(opts...)
	sc := all
	if q.limit > 0 {
		sc = tbl.Scan(append(opts, table.WithLimit(q.limit))...)
	}
	n, err := q.print(ctx, sc, stdout)
	if err != nil {
		return err
	}
	if q.limit > 0 && n == q.limit {
		// The limit may have left rows out: count them from the plan's
		// record counts (manifests only, no data file is read).
		total, exact, err := planRows(ctx, all)
		if err != nil {
			return fmt.Errorf("scan %s: count rows: %w", q.name, err)
		}
		if note := leftOut(n, total, exact); note != "" {
			fmt.Fprintln(stderr, note)
		}
	}
	return nil
}

// print prints the rows of sc, at most q.limit of them, and returns how
// many it printed.
func (q *scanRequest) print(ctx context.Context, sc *table.Scan, stdout io.Writer) (int64, error) {
	schema, batches, err := sc.ToArrowRecords(ctx)
	if err != nil {
		return 0, fmt.Errorf("scan %s: %w", q.name, err)
	}
	p, err := newPrinter(q.format, stdout, schema, q.columns...)
	if err != nil {
		return 0, err
	}
	n := int64(0)
	for rec, err := range batches {
		if err != nil {
			return n, fmt.Errorf("scan %s: %w", q.name, err)
		}
		for r := 0; r < int(rec.NumRows()) && (q.limit == 0 || n < q.limit); r++ {
			if err := p.row(rec, r); err != nil {
				return n, err
			}
			n++
		}
		rec.Release()
	}
	return n, p.close(n)
}

// planRows returns the rows a scan would read: the record counts of its
// data files. exact is false when delete files apply (Mink writes none).
func planRows(ctx context.Context, sc *table.Scan) (total int64, exact bool, err error) {
	tasks, err := sc.PlanFiles(ctx)
	if err != nil {
		return 0, false, err
	}
	exact = true
	for _, t := range tasks {
		total += t.File.Count()
		if len(t.DeleteFiles) > 0 || len(t.EqualityDeleteFiles) > 0 {
			exact = false
		}
	}
	return total, exact, nil
}

// leftOut is the note `mink scan` writes to stderr when the limit left rows
// out: printed of total rows (at most total when !exact) were printed.
// It is "" when none were left out.
func leftOut(printed, total int64, exact bool) string {
	left := total - printed
	if left <= 0 {
		return ""
	}
	more := "more " + plural(left, "row", "rows")
	if !exact {
		more += " at most (some may be deleted)"
	}
	return fmt.Sprintf("mink scan: %s of %s %s printed; %s %s left out: use --limit 0 for all, or --limit N",
		thousands(printed), thousands(total), plural(total, "row", "rows"), thousands(left), more)
}

// thousands writes n with commas between groups of three digits: 1,687.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// plural is one when n is 1, else many.
func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
