package compat

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

// row is one line of the matrix: what was run (an engine or a broker),
// its version, what was checked, whether it held, and how long it took.
type row struct {
	Component, Version, Check string
	OK                        bool
	Skipped                   bool
	Time                      time.Duration
	Detail                    string
}

type rows struct {
	mu    sync.Mutex
	rows  []row
	parts []part
}

// part is one test of the suite as a whole: its setup (brokers, nodes,
// engines started) included.
type part struct {
	Name string
	OK   bool
	Time time.Duration
}

// timePart records how long test t takes, setup and cleanup included, as
// a part named name.
func timePart(t *testing.T, name string) {
	start := time.Now()
	t.Cleanup(func() {
		matrix.mu.Lock()
		defer matrix.mu.Unlock()
		matrix.parts = append(matrix.parts, part{Name: name, OK: !t.Failed(), Time: time.Since(start)})
	})
}

// matrix collects the rows of the whole run; TestMain prints it.
var matrix rows

func (m *rows) add(r row) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rows = append(m.rows, r)
}

// check runs f as subtest name of t, timed, and records its row: pass
// when f did not fail the subtest.
func check(t *testing.T, component, version, name string, f func(t *testing.T)) bool {
	t.Helper()
	start := time.Now()
	var skipped bool
	ok := t.Run(name, func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		f(t)
	})
	matrix.add(row{Component: component, Version: version, Check: name, OK: ok, Skipped: skipped, Time: time.Since(start)})
	return ok
}

// print writes the matrix as a Markdown table.
func (m *rows) print(w io.Writer) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.rows) == 0 {
		return
	}
	fmt.Fprintln(w, "\ncompat matrix")
	fmt.Fprintln(w, "| component | version | check | result | time |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	pass, fail, skip := 0, 0, 0
	for _, r := range m.rows {
		res := "pass"
		switch {
		case r.Skipped:
			res, skip = "skipped", skip+1
		case !r.OK:
			res, fail = "FAIL", fail+1
		default:
			pass++
		}
		if r.Detail != "" && !r.OK {
			res += ": " + strings.ReplaceAll(r.Detail, "|", "/")
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %.1f s |\n", r.Component, r.Version, r.Check, res, r.Time.Seconds())
	}
	if len(m.parts) > 0 {
		fmt.Fprintln(w, "\n| part | result | time |")
		fmt.Fprintln(w, "|---|---|---|")
		var total time.Duration
		for _, p := range m.parts {
			res := "pass"
			if !p.OK {
				res = "FAIL"
			}
			total += p.Time
			fmt.Fprintf(w, "| %s | %s | %.0f s |\n", p.Name, res, p.Time.Seconds())
		}
		fmt.Fprintf(w, "| all parts | | %.0f s |\n", total.Seconds())
	}
	fmt.Fprintf(w, "compat: %d passed, %d failed, %d skipped\n", pass, fail, skip)
}
