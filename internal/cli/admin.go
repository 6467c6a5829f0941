package cli

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/catalog/rest"
	_ "github.com/apache/iceberg-go/io/gocloud/s3" // s3:// file IO for scans
	"github.com/apache/iceberg-go/table"
)

func adminFlag(fs *flag.FlagSet) *string {
	return fs.String("admin", "http://127.0.0.1:8181", "admin URL of any Mink node")
}

// call sends a request to the admin API and decodes a JSON answer into out.
func call(ctx context.Context, method, url string, body any, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("cannot reach the admin API (is a node running? --admin): %w", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(b, &e) == nil && e.Error != "" {
			return fmt.Errorf("%s: %s", resp.Status, e.Error)
		}
		return fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(b)))
	}
	if out != nil && len(b) > 0 {
		return json.Unmarshal(b, out)
	}
	return nil
}

func tableCmd(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return usagef("missing table command (create, list, get, status or delete)")
	}
	sub, args := args[0], args[1:]
	fs := flag.NewFlagSet("table "+sub, flag.ContinueOnError)
	admin := adminFlag(fs)
	switch sub {
	case "create":
		topic := fs.String("topic", "", "Kafka topic (required)")
		vf := fs.String("value-format", "", "raw, string or json (required)")
		kf := fs.String("key-format", "raw", "raw or string")
		schema := fs.String("schema", "", "Iceberg schema JSON file (required for json)")
		start := fs.String("start", "earliest", "earliest or latest")
		var props listFlag
		fs.Var(&props, "property", "table property k=v[,k=v…]")
		var name string
		if err := parse(fs, args, &name); err != nil {
			return err
		}
		switch {
		case name == "":
			return usagef("missing table name NS.NAME")
		case *topic == "":
			return usagef("--topic is required")
		case *vf == "":
			return usagef("--value-format is required (raw, string or json)")
		}
		ns, tname, ok := strings.Cut(name, ".")
		if i := strings.LastIndexByte(name, '.'); i > 0 {
			ns, tname, ok = name[:i], name[i+1:], true
		}
		if !ok || ns == "" || tname == "" {
			return usagef("table name %q must be NS.NAME", name)
		}
		def := map[string]any{"namespace": ns, "name": tname, "topic": *topic, "value_format": *vf,
			"key_format": *kf, "start": *start}
		if *schema != "" {
			b, err := os.ReadFile(*schema)
			if err != nil {
				return err
			}
			if !json.Valid(b) {
				return fmt.Errorf("schema file %s is not valid JSON (expected an Iceberg schema: {\"type\":\"struct\",\"fields\":[…]})", *schema)
			}
			def["schema"] = json.RawMessage(b)
		}
		if len(props) > 0 {
			p := map[string]string{}
			for _, kv := range props {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || k == "" {
					return usagef("--property %q: want KEY=VALUE", kv)
				}
				p[k] = v
			}
			def["properties"] = p
		}
		var t map[string]any
		if err := call(ctx, http.MethodPost, *admin+"/admin/v1/tables", def, &t); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "created %s.%s on topic %s (dead letters: %s.%s~dlq)\n", ns, tname, *topic, ns, tname)
		return nil
	case "list":
		if err := parse(fs, args); err != nil {
			return err
		}
		var out struct {
			Tables []struct {
				Namespace, Name, Topic string
				ValueFormat            string `json:"value_format"`
				CurrentSnapshotID      *int64 `json:"current_snapshot_id"`
			} `json:"tables"`
		}
		if err := call(ctx, http.MethodGet, *admin+"/admin/v1/tables", nil, &out); err != nil {
			return err
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TABLE\tTOPIC\tFORMAT\tSNAPSHOT")
		for _, t := range out.Tables {
			snap := "-"
			if t.CurrentSnapshotID != nil {
				snap = fmt.Sprint(*t.CurrentSnapshotID)
			}
			fmt.Fprintf(tw, "%s.%s\t%s\t%s\t%s\n", t.Namespace, t.Name, t.Topic, t.ValueFormat, snap)
		}
		return tw.Flush()
	case "status":
		var name string
		if err := parse(fs, args, &name); err != nil {
			return err
		}
		if name == "" {
			return usagef("missing table name NS.NAME")
		}
		return tableStatus(ctx, *admin, name, stdout)
	case "get", "delete":
		var name string
		if err := parse(fs, args, &name); err != nil {
			return err
		}
		if name == "" {
			return usagef("missing table name NS.NAME")
		}
		if sub == "delete" {
			if err := call(ctx, http.MethodDelete, *admin+"/admin/v1/tables/"+name, nil, nil); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "deleted %s (the topic is untouched)\n", name)
			return nil
		}
		var t json.RawMessage
		if err := call(ctx, http.MethodGet, *admin+"/admin/v1/tables/"+name, nil, &t); err != nil {
			return err
		}
		_, err := stdout.Write(append(t, '\n'))
		return err
	}
	return usagef("unknown table command %q (create, list, get, status or delete)", sub)
}

func status(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	admin := adminFlag(fs)
	all := fs.Bool("leases", false, "also list every lease: holder, epoch and expiry")
	if err := parse(fs, args); err != nil {
		return err
	}
	var nodes struct {
		Nodes []struct {
			ID        string    `json:"id"`
			Address   string    `json:"address"`
			Roles     []string  `json:"roles"`
			ExpiresAt time.Time `json:"expires_at"`
		} `json:"nodes"`
	}
	if err := call(ctx, http.MethodGet, *admin+"/admin/v1/nodes", nil, &nodes); err != nil {
		return err
	}
	var leases struct {
		Leases []struct {
			Scope, Table, Kind string
			Partition          *int32
			Holder             *string
			Epoch              int64
			ExpiresAt          *time.Time `json:"expires_at"`
		} `json:"leases"`
	}
	if err := call(ctx, http.MethodGet, *admin+"/admin/v1/leases", nil, &leases); err != nil {
		return err
	}
	// Per node: its partition leases and the tables it writes, with epochs.
	now := time.Now()
	partitions := map[string]int{}
	writes := map[string][]string{}
	for _, l := range leases.Leases {
		if l.Holder == nil {
			continue
		}
		if l.Kind == "writer" {
			writes[*l.Holder] = append(writes[*l.Holder], fmt.Sprintf("%s@%d", l.Table, l.Epoch))
		} else {
			partitions[*l.Holder]++
		}
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tADDRESS\tROLES\tEXPIRES\tPARTITIONS\tWRITER OF (TABLE@EPOCH)")
	for _, n := range nodes.Nodes {
		w := strings.Join(writes[n.ID], ",")
		if w == "" {
			w = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", n.ID, n.Address, strings.Join(n.Roles, ","),
			expiresIn(&n.ExpiresAt, now), partitions[n.ID], w)
	}
	tw.Flush()
	if *all {
		fmt.Fprintln(stdout)
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TABLE\tLEASE\tHOLDER\tEPOCH\tEXPIRES")
		for _, l := range leases.Leases {
			lease, holder, exp := l.Kind, "-", "-"
			if l.Partition != nil {
				lease = fmt.Sprintf("partition %d", *l.Partition)
			}
			if l.Holder != nil {
				holder, exp = *l.Holder, expiresIn(l.ExpiresAt, now)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", l.Table, lease, holder, l.Epoch, exp)
		}
		tw.Flush()
	}
	var tablesOut struct {
		Tables []struct {
			Namespace, Name string
			DLQOf           *int64 `json:"dlq_of"`
		} `json:"tables"`
	}
	if err := call(ctx, http.MethodGet, *admin+"/admin/v1/tables", nil, &tablesOut); err != nil {
		return err
	}
	for _, t := range tablesOut.Tables {
		if t.DLQOf != nil {
			continue
		}
		name := t.Namespace + "." + t.Name
		var parts tablePartitions
		if err := call(ctx, http.MethodGet, *admin+"/admin/v1/tables/"+name+"/partitions", nil, &parts); err != nil {
			return err
		}
		writer := "-"
		for _, l := range leases.Leases {
			if l.Table == name && l.Kind == "writer" && l.Holder != nil {
				writer = fmt.Sprintf("%s (epoch %d, expires %s)", *l.Holder, l.Epoch, expiresIn(l.ExpiresAt, now))
			}
		}
		fmt.Fprintln(stdout)
		printProgress(stdout, name, writer, parts)
	}
	return nil
}

// tablePartitions is the progress of a table's partitions, as the admin
// API answers it (…/partitions, and in …/status).
type tablePartitions struct {
	Partitions []struct {
		Partition       int32   `json:"partition"`
		IndexedOffset   int64   `json:"indexed_offset"`
		CommittedOffset int64   `json:"committed_offset"`
		HighWatermark   int64   `json:"high_watermark"`
		Lag             int64   `json:"lag"`
		RecordsPerSec   float64 `json:"records_per_second"`
		Holder          *string `json:"holder"`
		Epoch           int64   `json:"epoch"`
	} `json:"partitions"`
	KafkaError string `json:"kafka_error"`
}

// printProgress prints a table's writer and the progress of each of its
// partitions (mink status, mink table status).
func printProgress(stdout io.Writer, name, writer string, parts tablePartitions) {
	fmt.Fprintf(stdout, "%s  writer: %s\n", name, writer)
	if parts.KafkaError != "" {
		fmt.Fprintf(stdout, "  kafka unreachable: %s\n", parts.KafkaError)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  PARTITION\tHOLDER\tEPOCH\tINDEXED\tCOMMITTED\tHIGH WATERMARK\tLAG\tRECORDS/S (1 MIN)")
	for _, p := range parts.Partitions {
		holder := "-"
		if p.Holder != nil {
			holder = *p.Holder
		}
		fmt.Fprintf(tw, "  %d\t%s\t%d\t%d\t%d\t%d\t%d\t%.1f\n", p.Partition, holder, p.Epoch, p.IndexedOffset, p.CommittedOffset, p.HighWatermark, p.Lag, p.RecordsPerSec)
	}
	tw.Flush()
}

// tableStatus prints what mink status prints for one table, then the JSON
// fields its records had that match no column (count and examples) and its
// dead letters (GET /admin/v1/tables/{name}/status).
func tableStatus(ctx context.Context, admin, name string, stdout io.Writer) error {
	var st struct {
		tablePartitions
		Table  string `json:"table"`
		Writer *struct {
			Holder    string    `json:"holder"`
			Epoch     int64     `json:"epoch"`
			ExpiresAt time.Time `json:"expires_at"`
		} `json:"writer"`
		UnknownFields struct {
			Count    int64    `json:"count"`
			Examples []string `json:"examples"`
		} `json:"unknown_fields"`
		DeadLetters int64 `json:"dead_letters"`
	}
	if err := call(ctx, http.MethodGet, admin+"/admin/v1/tables/"+name+"/status", nil, &st); err != nil {
		return err
	}
	writer := "-"
	if w := st.Writer; w != nil {
		writer = fmt.Sprintf("%s (epoch %d, expires %s)", w.Holder, w.Epoch, expiresIn(&w.ExpiresAt, time.Now()))
	}
	printProgress(stdout, st.Table, writer, st.tablePartitions)
	fmt.Fprintf(stdout, "unknown JSON fields: %d", st.UnknownFields.Count)
	if len(st.UnknownFields.Examples) > 0 {
		quoted := make([]string, len(st.UnknownFields.Examples))
		for i, e := range st.UnknownFields.Examples {
			quoted[i] = strconv.Quote(e)
		}
		fmt.Fprintf(stdout, " (e.g. %s)", strings.Join(quoted, ", "))
	}
	fmt.Fprintf(stdout, "\ndead letters: %d (mink scan '%s~dlq')\n", st.DeadLetters, st.Table)
	return nil
}

// expiresIn shows an expiry (by the database clock) relative to now (by
// this machine's clock), to the second: "in 9s", or "expired".
func expiresIn(at *time.Time, now time.Time) string {
	if at == nil || at.IsZero() {
		return "-"
	}
	d := at.Sub(now).Round(time.Second)
	if d < 0 {
		return "expired"
	}
	return "in " + d.String()
}

// defaultScanLimit is the rows `mink scan` prints without --limit.
const defaultScanLimit = 20

func scan(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("scan", flag.ContinueOnError)
	admin := adminFlag(fs)
	limit := fs.Int64("limit", defaultScanLimit, "rows to print (0 = all)")
	format := fs.String("format", "table", "table, json or csv")
	var columns listFlag
	fs.Var(&columns, "columns", "columns to read, e.g. id,properties.mag,_kafka.offset (default all)")
	var name string
	if err := parse(fs, args, &name); err != nil {
		return err
	}
	if *limit < 0 {
		return usagef("--limit must be 0 (all rows) or more, not %d", *limit)
	}
	switch *format {
	case "table", "json", "csv":
	default:
		return usagef("unknown --format %q (table, json or csv)", *format)
	}
	i := strings.LastIndexByte(name, '.')
	if name == "" {
		return usagef("missing table name NS.NAME")
	}
	if i <= 0 || i == len(name)-1 {
		return usagef("table name %q must be NS.NAME", name)
	}
	cat, err := rest.NewCatalog(ctx, "mink", *admin)
	if err != nil {
		return fmt.Errorf("catalog %s: %w", *admin, err)
	}
	tbl, err := cat.LoadTable(ctx, table.Identifier{name[:i], name[i+1:]})
	if err != nil {
		return fmt.Errorf("load %s: %w", name, err)
	}
	var opts []table.ScanOption
	if len(columns) > 0 {
		opts = append(opts, table.WithSelectedFields(columns...))
	}
	all := tbl.Scan(opts...)
	sc := all
	if *limit > 0 {
		sc = tbl.Scan(append(opts, table.WithLimit(*limit))...)
	}
	schema, batches, err := sc.ToArrowRecords(ctx)
	if err != nil {
		return fmt.Errorf("scan %s: %w", name, err)
	}
	p, err := newPrinter(*format, stdout, schema, columns...)
	if err != nil {
		return err
	}
	n := int64(0)
	for rec, err := range batches {
		if err != nil {
			return fmt.Errorf("scan %s: %w", name, err)
		}
		for r := 0; r < int(rec.NumRows()) && (*limit == 0 || n < *limit); r++ {
			if err := p.row(rec, r); err != nil {
				return err
			}
			n++
		}
		rec.Release()
	}
	if err := p.close(n); err != nil {
		return err
	}
	if *limit > 0 && n == *limit {
		// The limit may have left rows out: count them from the plan's
		// record counts (manifests only, no data file is read).
		total, exact, err := planRows(ctx, all)
		if err != nil {
			return fmt.Errorf("scan %s: count rows: %w", name, err)
		}
		if left := total - n; left > 0 {
			more := "more " + plural(left, "row", "rows")
			if !exact {
				more += " at most (some may be deleted)"
			}
			fmt.Fprintf(stderr, "mink scan: %s of %s %s printed; %s %s left out: use --limit 0 for all, or --limit N\n",
				thousands(n), thousands(total), plural(total, "row", "rows"), thousands(left), more)
		}
	}
	return nil
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

type printer struct {
	format string
	out    io.Writer
	tw     *tabwriter.Writer
	csv    *csv.Writer
	// leafOrder orders the flattened columns of table and CSV output,
	// topOrder the top-level columns of JSON output.
	leafOrder, topOrder []int
}

// newPrinter returns a printer of rows of sc. Columns come in the order of
// columns (the names --columns gave, a struct's name standing for its
// fields), the others after them in schema order.
func newPrinter(format string, out io.Writer, sc *arrow.Schema, columns ...string) (*printer, error) {
	p := &printer{format: format, out: out}
	var names []string
	for _, f := range sc.Fields() {
		names = append(names, leafNames(f.Name, f.Type)...)
	}
	p.leafOrder = order(names, columns, func(name, c string) bool { return name == c || strings.HasPrefix(name, c+".") })
	top := make([]string, sc.NumFields())
	for i, f := range sc.Fields() {
		top[i] = f.Name
	}
	p.topOrder = order(top, columns, func(name, c string) bool { return name == c || strings.HasPrefix(c, name+".") })
	names = permute(names, p.leafOrder)
	switch format {
	case "table":
		p.tw = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(p.tw, strings.Join(names, "\t"))
	case "csv":
		p.csv = csv.NewWriter(out)
		return p, p.csv.Write(names)
	case "json":
	default:
		return nil, usagef("unknown --format %q (table, json or csv)", format)
	}
	return p, nil
}

// order returns the indices of names sorted by the first of columns that
// matches each (stable; names no column matches come last).
func order(names, columns []string, match func(name, column string) bool) []int {
	rank := func(name string) int {
		for i, c := range columns {
			if match(name, c) {
				return i
			}
		}
		return len(columns)
	}
	idx := make([]int, len(names))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return rank(names[a]) - rank(names[b]) })
	return idx
}

// permute returns xs in the order of idx.
func permute[T any](xs []T, idx []int) []T {
	out := make([]T, len(idx))
	for i, j := range idx {
		out[i] = xs[j]
	}
	return out
}

// leafNames flattens struct columns into dotted names (properties.mag), so
// that table and csv output show nested fields as columns of their own.
func leafNames(name string, t arrow.DataType) []string {
	st, ok := t.(*arrow.StructType)
	if !ok {
		return []string{name}
	}
	var out []string
	for _, f := range st.Fields() {
		out = append(out, leafNames(name+"."+f.Name, f.Type)...)
	}
	return out
}

// leafCells appends the cells of row r of col, flattened like leafNames; a
// null struct makes all of its fields null.
func leafCells(out []string, col arrow.Array, r int, parentNull bool) []string {
	if st, ok := col.(*array.Struct); ok {
		null := parentNull || st.IsNull(r)
		for i := 0; i < st.NumField(); i++ {
			out = leafCells(out, st.Field(i), r, null)
		}
		return out
	}
	if parentNull {
		return append(out, "null")
	}
	return append(out, cell(col, r))
}

// timestampString formats a timestamp exactly, whatever its year: RFC 3339
// in UTC for timestamptz (years past 9999 or before 0 get more digits or a
// sign, as ISO 8601's expanded years), the wall clock without zone for
// timestamp. arrow's ToTime is exact for every unit (microseconds go
// through time.UnixMicro, not nanoseconds).
func timestampString(v arrow.Timestamp, typ *arrow.TimestampType) string {
	t := v.ToTime(typ.Unit)
	var s string
	if typ.TimeZone == "" {
		s = t.Format("2006-01-02 15:04:05.999999999")
	} else {
		t = t.UTC()
		s = t.Format(time.RFC3339Nano)
	}
	if t.Year() > 9999 {
		// ISO 8601's expanded years carry a sign (Java's Instant prints
		// "+294247-01-10T…" too); Go's layout writes the digits alone.
		s = "+" + s
	}
	return s
}

// row prints row r: a JSON object of the columns in schema order (see
// format.go), or one table or CSV line.
func (p *printer) row(rec arrow.RecordBatch, r int) error {
	if p.format == "json" {
		b := []byte{'{'}
		fields := rec.Schema().Fields()
		for k, i := range p.topOrder {
			if k > 0 {
				b = append(b, ',')
			}
			b = appendString(b, fields[i].Name)
			b = append(b, ':')
			b = appendJSON(b, rec.Column(i), r)
		}
		b = append(b, '}', '\n')
		_, err := p.out.Write(b)
		return err
	}
	var vals []string
	for i := 0; i < int(rec.NumCols()); i++ {
		vals = leafCells(vals, rec.Column(i), r, false)
	}
	vals = permute(vals, p.leafOrder)
	if p.format == "csv" {
		return p.csv.Write(vals)
	}
	for i, s := range vals {
		if utf8.RuneCountInString(s) > 40 {
			vals[i] = string([]rune(s)[:37]) + "..."
		}
	}
	_, err := fmt.Fprintln(p.tw, strings.Join(vals, "\t"))
	return err
}

// plural is one when n is 1, else many.
func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func (p *printer) close(n int64) error {
	switch p.format {
	case "csv":
		p.csv.Flush()
		return p.csv.Error()
	case "table":
		if err := p.tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintf(p.out, "(%d %s)\n", n, plural(n, "row", "rows"))
	}
	return nil
}
