package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log"
	"net/url"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"

	"github.com/minkhq/mink/devenv"
	"github.com/minkhq/mink/internal/pglocal"
)

// Scenario is one benchmark scenario (a section of RESULTS.md). Run
// measures h.Runs times and records one sample per run of each figure.
type Scenario struct {
	// Name selects the scenario on the command line (-run NAME).
	Name string
	// Title heads its section in RESULTS.md.
	Title string
	// About is a paragraph under the title: what is measured and how.
	About string
	Run   func(ctx context.Context, h *H) error
}

var scenarios []Scenario

// register adds a scenario; scenario files call it from init.
func register(s Scenario) { scenarios = append(scenarios, s) }

// Figure is one measured quantity. Its value in RESULTS.md is the median of
// its samples (one per run).
type Figure struct {
	// Name is unique within the scenario, e.g. "json: indexing".
	Name string
	// Unit, e.g. "MB/s per core", "records/s per core", "ms".
	Unit string
	// Ref names the reference figure of the same scenario; the ratio
	// median/median(ref) is reported. Empty: no reference.
	Ref string
	// Target: met when median ≥ Min (if Min != 0), median ≤ Max (if
	// Max != 0), ratio ≥ MinRatio (if MinRatio != 0) and ratio ≤ MaxRatio
	// (if MaxRatio != 0).
	Min, Max, MinRatio, MaxRatio float64
	// Note is a short remark shown in the table (how it was measured,
	// a reference that is computed rather than measured, …).
	Note string

	samples []float64
}

// H is a scenario's handle on the harness.
type H struct {
	// Runs is how many times each figure is measured (-runs).
	Runs int
	// Quick asks for a short run (smaller inputs) while developing (-quick).
	Quick bool

	scenario string
	mu       sync.Mutex
	figures  []*Figure
	notes    []string
	skipped  string
}

// Figure declares a figure (once, before its first sample).
func (h *H) Figure(f Figure) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, g := range h.figures {
		if g.Name == f.Name {
			panic("bench: figure declared twice: " + f.Name)
		}
	}
	h.figures = append(h.figures, &f)
}

// Add records one sample of a declared figure.
func (h *H) Add(name string, v float64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, g := range h.figures {
		if g.Name == name {
			g.samples = append(g.samples, v)
			log.Printf("%s: %s = %.4g %s", h.scenario, name, v, g.Unit)
			return
		}
	}
	panic("bench: undeclared figure: " + name)
}

// Note adds a line under the scenario's table (a finding, a profile
// summary, an extrapolation's assumptions).
func (h *H) Note(format string, args ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.notes = append(h.notes, fmt.Sprintf(format, args...))
}

// Logf logs progress to stderr.
func (h *H) Logf(format string, args ...any) {
	log.Printf(h.scenario+": "+format, args...)
}

// Skip marks the scenario skipped (for example shared data absent) and
// returns errSkip for Run to return.
func (h *H) Skip(reason string) error {
	h.skipped = reason
	return errSkip
}

var errSkip = fmt.Errorf("skipped")

// ifQuick returns quick when the run is -quick, full otherwise.
func ifQuick[T any](h *H, full, quick T) T {
	if h.Quick {
		return quick
	}
	return full
}

// Data returns the path of a file of ../shared/data (devenv.FindData), or
// ok=false when it is absent.
func (h *H) Data(name string) (string, bool) { return devenv.FindData(name) }

// SkipNoData marks the scenario skipped for want of the shared data file
// name, saying where it was looked for, and returns errSkip.
func (h *H) SkipNoData(name string) error {
	skipped.Add(1)
	return h.Skip(name + " not found: looked in shared/data next to the clone and its parents; set MINK_DATA_DIR=/path/to/data")
}

// skipped counts scenarios skipped for want of data (main says so at the end).
var skipped atomic.Int64

// Postgres returns the URL of a fresh, empty schema on the run's
// PostgreSQL server (search_path set), for nodes to migrate and share.
func (h *H) Postgres(ctx context.Context) (string, error) {
	base, err := postgresBase(ctx)
	if err != nil {
		return "", err
	}
	return newSchema(ctx, base)
}

// newSchema creates a fresh schema on the server at base and returns a URL
// whose search_path is it.
func newSchema(ctx context.Context, base string) (string, error) {
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "b_" + hex.EncodeToString(b[:])
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		return "", fmt.Errorf("bench: connect: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		return "", fmt.Errorf("bench: create schema: %w", err)
	}
	u, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// TempDir returns a fresh directory removed when the run ends.
func (h *H) TempDir() (string, error) {
	d, err := os.MkdirTemp("", "mink-bench-")
	if err != nil {
		return "", err
	}
	cleanupMu.Lock()
	cleanups = append(cleanups, func() { os.RemoveAll(d) })
	cleanupMu.Unlock()
	return d, nil
}

var (
	pgOnce    sync.Once
	pgURL     string
	pgErr     error
	cleanupMu sync.Mutex
	cleanups  []func()
)

// postgresBase is MINK_TEST_POSTGRES_URL, or a throwaway cluster started
// once for the run (the same rule as the tests).
func postgresBase(ctx context.Context) (string, error) {
	pgOnce.Do(func() {
		if u := os.Getenv("MINK_TEST_POSTGRES_URL"); u != "" {
			pgURL = u
			return
		}
		pg, err := pglocal.StartPostgres(ctx)
		if err != nil {
			pgErr = err
			return
		}
		pgURL = pg.URL
		cleanupMu.Lock()
		cleanups = append(cleanups, pg.Stop)
		cleanupMu.Unlock()
	})
	return pgURL, pgErr
}

func runCleanups() {
	cleanupMu.Lock()
	defer cleanupMu.Unlock()
	for i := len(cleanups) - 1; i >= 0; i-- {
		cleanups[i]()
	}
	cleanups = nil
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func repoRoot() string {
	dir, _ := os.Getwd()
	for d := dir; d != "/" && d != "."; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
	}
	return dir
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// startCPUProfile starts a CPU profile of the whole process into path (none
// when path is empty); stop ends it, once.
func startCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			pprof.StopCPUProfile()
			f.Close()
		})
	}, nil
}
