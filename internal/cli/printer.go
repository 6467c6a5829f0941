package cli

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// printer prints the rows `mink scan` reads, as a table, JSON lines or CSV
// (the values exactly, format.go).
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
		s = escapeControls(s)
		if utf8.RuneCountInString(s) > 40 {
			s = string([]rune(s)[:37]) + "..."
		}
		vals[i] = s
	}
	_, err := fmt.Fprintln(p.tw, strings.Join(vals, "\t"))
	return err
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

// escapeControls returns s with its control characters (C0, DEL, C1) and
// bidirectional formatting characters written as Go escapes (\x1b, \r,
// \u202e): a table cell goes to a terminal, where a value's escape
// sequences, carriage returns or tabs would act on the screen or fake
// other cells and rows. JSON and CSV output keep values exact.
func escapeControls(s string) string {
	special := func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) }
	if !strings.ContainsFunc(s, special) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if special(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}
