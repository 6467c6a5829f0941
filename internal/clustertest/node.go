package clustertest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/minkhq/mink/internal/testkit/proc"
)

// NodeOptions configures one `mink serve` process. Zero values take the
// package defaults.
type NodeOptions struct {
	ID             string   // default "node-N"
	Roles          []string // default both (the flag is not passed)
	MaxPartitions  int
	LeaseTTL       time.Duration // default DefaultLeaseTTL
	FlushInterval  time.Duration // default DefaultFlushInterval
	CommitInterval time.Duration // default DefaultCommitInterval
	LogLevel       string        // default "info"
	Args           []string      // more flags; "--auth", "principals" turns access control on (default --auth none)
	// PostgresURL replaces the test's Postgres URL for this node (for
	// example one through Env.PostgresProxy).
	PostgresURL string
	// NoWait returns as soon as the process started, without waiting for
	// /readyz.
	NoWait bool
}

// Node is one `mink serve` process (its Pid, Done, Running, ExitedAt and
// WaitErr are the process's).
type Node struct {
	*proc.Process
	ID       string
	CacheDir string // --cache-dir
	Opts     NodeOptions

	t   testing.TB
	url string

	mu     sync.Mutex
	paused bool
}

// StartNode starts `mink serve` with the test's Postgres and Kafka on a
// free loopback port and waits until it answers /readyz. Its output goes
// to a log file whose tail is printed if the test fails.
func (e *Env) StartNode(opts NodeOptions) *Node {
	e.t.Helper()
	e.mu.Lock()
	e.seq++
	seq := e.seq
	e.mu.Unlock()
	if opts.ID == "" {
		opts.ID = fmt.Sprintf("node-%d", seq)
	}
	if opts.LeaseTTL == 0 {
		opts.LeaseTTL = DefaultLeaseTTL
	}
	if opts.FlushInterval == 0 {
		opts.FlushInterval = DefaultFlushInterval
	}
	if opts.CommitInterval == 0 {
		opts.CommitInterval = DefaultCommitInterval
	}
	if opts.LogLevel == "" {
		opts.LogLevel = "info"
	}
	port, err := proc.FreePort()
	if err != nil {
		e.t.Fatalf("clustertest: free port: %v", err)
	}
	dir := e.t.TempDir()
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	pg := e.PostgresURL
	if opts.PostgresURL != "" {
		pg = opts.PostgresURL
	}
	cacheDir := filepath.Join(dir, "cache")
	args := []string{"serve",
		"--postgres", pg,
		"--kafka", strings.Join(e.Brokers, ","),
		"--listen", fmt.Sprintf("127.0.0.1:%d", port),
		"--advertise", url,
		"--node-id", opts.ID,
		"--lease-ttl", opts.LeaseTTL.String(),
		"--flush-interval", opts.FlushInterval.String(),
		"--commit-interval", opts.CommitInterval.String(),
		"--cache-dir", cacheDir,
		"--log-level", opts.LogLevel,
		// Not about access control; opts.Args may give --auth principals.
		"--auth", "none",
	}
	if len(opts.Roles) > 0 {
		args = append(args, "--roles", strings.Join(opts.Roles, ","))
	}
	if opts.MaxPartitions > 0 {
		args = append(args, "--max-partitions", strconv.Itoa(opts.MaxPartitions))
	}
	env := []string{"GOTRACEBACK=all"}
	if e.Real != nil {
		kargs, kenv := e.Real.MinkArgs()
		args, env = append(args, kargs...), append(env, kenv...)
	}
	args = append(args, opts.Args...)

	// A test binary that crashes leaves no node running (proc.Start).
	p, err := proc.Start(e.bin, args, filepath.Join(dir, "mink.log"), env...)
	if err != nil {
		e.t.Fatalf("clustertest: %s: %v", opts.ID, err)
	}
	n := &Node{Process: p, ID: opts.ID, Opts: opts, t: e.t, url: url, CacheDir: cacheDir}
	e.mu.Lock()
	e.nodes = append(e.nodes, n)
	e.mu.Unlock()
	e.t.Cleanup(func() {
		if e.t.Failed() {
			e.t.Logf("--- log of %s (%s), last lines:\n%s", n.ID, n.LogPath, n.Tail(60))
		}
	})
	if !opts.NoWait {
		n.WaitReady(30 * time.Second)
	}
	return n
}

// WaitReady waits until the node answers /readyz with 200.
func (n *Node) WaitReady(timeout time.Duration) {
	n.t.Helper()
	if err := n.Process.WaitReady(context.Background(), n.url, timeout); err != nil {
		n.t.Fatalf("clustertest: %s: %v:\n%s", n.ID, err, n.Tail(40))
	}
}

// URL is the node's advertised URL (catalog, S3 and admin API).
func (n *Node) URL() string { return n.url }

// Stop sends SIGTERM (a clean stop: jobs stop, leases are released, the
// row is deleted) and waits for the process to exit; it fails the test if
// the process does not exit in time or exits with an error.
func (n *Node) Stop() {
	n.t.Helper()
	if !n.Running() {
		return
	}
	n.Resume()
	if err := n.Process.Stop(20 * time.Second); err != nil {
		n.t.Fatalf("clustertest: %s %v", n.ID, err)
	}
	if err := n.WaitErr(); err != nil {
		n.t.Errorf("clustertest: %s exited with %v after SIGTERM", n.ID, err)
	}
}

// Pause sends SIGSTOP: the process stops running but keeps its
// connections, as a node stuck in a long pause would.
func (n *Node) Pause() {
	n.t.Helper()
	if err := n.Signal(syscall.SIGSTOP); err != nil {
		n.t.Fatalf("clustertest: SIGSTOP %s: %v", n.ID, err)
	}
	n.mu.Lock()
	n.paused = true
	n.mu.Unlock()
}

// Resume sends SIGCONT to a paused node.
func (n *Node) Resume() {
	n.mu.Lock()
	paused := n.paused
	n.paused = false
	n.mu.Unlock()
	if paused && n.Running() {
		_ = n.Signal(syscall.SIGCONT)
	}
}

// Log returns the node's output so far.
func (n *Node) Log() string {
	b, _ := os.ReadFile(n.LogPath)
	return string(b)
}

// LogLines returns the lines of the node's output that contain s.
func (n *Node) LogLines(s string) []string {
	var out []string
	for _, l := range strings.Split(n.Log(), "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return out
}

// LogTimes returns the times (the time= field the process's text logger
// writes) of the lines of the node's output that contain s, in order.
// Lines without a parseable time are skipped.
func (n *Node) LogTimes(s string) []time.Time {
	var out []time.Time
	for _, l := range n.LogLines(s) {
		if !strings.HasPrefix(l, "time=") {
			continue
		}
		f, _, _ := strings.Cut(strings.TrimPrefix(l, "time="), " ")
		if at, err := time.Parse(time.RFC3339Nano, f); err == nil {
			out = append(out, at)
		}
	}
	return out
}

// Tail returns the last lines of the node's output.
func (n *Node) Tail(lines int) string {
	return strings.Join(n.Process.Tail(lines, nil), "\n")
}

// cleanup kills the process if it still runs (a paused one too).
func (n *Node) cleanup() {
	if !n.Running() {
		return
	}
	_ = n.Cmd.Process.Kill()
	_ = n.Signal(syscall.SIGCONT)
	select {
	case <-n.Done():
	case <-time.After(10 * time.Second):
	}
}
